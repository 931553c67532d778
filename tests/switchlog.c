#include "tests/switchlog.h"

#include "kernel/cpu.h"

static void log_switch(const struct task *prev, const struct task *next, void *arg)
{
    struct switch_log *l = arg;
    l->switches++;
    if (l->buf && l->len < l->cap)
        l->buf[l->len++] = (struct switch_log_entry){prev->id, next->id, rdtsc()};
}

void switch_log_start(struct switch_log *l, struct switch_log_entry *buf, unsigned cap)
{
    sched_switch_probe_remove(&l->probe);
    l->buf = buf;
    l->cap = cap;
    l->len = 0;
    l->switches = 0;
    l->probe = (struct sched_switch_probe){.fn = log_switch, .arg = l};
    sched_switch_probe_add(&l->probe);
}

unsigned switch_log_stop(struct switch_log *l)
{
    sched_switch_probe_remove(&l->probe);
    return l->len;
}
