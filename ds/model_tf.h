/*
 * What bts_model_write_debugctl (ds/model.S) must do with RFLAGS.TF after a DEBUGCTL write:
 * bts_model_debugctl_changed (ds/model.c) returns one of these. Plain numbers, for C and
 * assembly alike.
 */
#ifndef BTSX_DS_MODEL_TF_H
#define BTSX_DS_MODEL_TF_H

#define TF_CLEAR 0 /* recording is off: stop stepping */
#define TF_SET   1 /* recording is on: step from the RET at bts_model_write_ret */
#define TF_LEAVE 2 /* inside a trap handler: the trap exit hook sets the frame's TF */

#endif
