/* The size of rand_area (tests/rand_area.S), where tests/t_rand.c runs kernel-mode programs. */
#ifndef BTSX_TESTS_RAND_AREA_H
#define BTSX_TESTS_RAND_AREA_H

#define RAND_AREA_BYTES (32 * 1024)

#endif
