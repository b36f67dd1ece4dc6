// SPDX-License-Identifier: GPL-2.0
// profcpu's BPF programs, compiled once (CO-RE: field offsets are relocated
// against the running kernel's BTF by libbpf at load time) and embedded in
// the profcpu binary as a bpftool skeleton (cmake/Bpf.cmake).
//
//  - on_switch (tp_btf/sched_switch): for threads in scope (the profiled
//    processes, a container's cgroup, or the whole machine), the time from
//    switching out to running again, with the stacks they switched out
//    with: an off-CPU profile. Two ring-buffer events per stay: the stacks
//    (inline) when it switches out, the time when it runs again.
//  - on_fork / on_exit: keep the set of profiled processes (the target and
//    every process it starts) current without a round trip to user space.
//  - on_sample (perf_event): attached to the sampler's cpu-clock events;
//    sends each sample with its stacks inline, as the switch-outs do (user
//    space counts them per second). Returns 0 so perf writes no sample
//    record of its own.
//
// The helpers used need a GPL-compatible license (bpf_get_stack is GPL-only).
#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "collector/bpf/bpf_events.h"

char LICENSE[] SEC("license") = "GPL";

// include/linux/sched.h: the final switch of an exiting task.
#define TASK_DEAD 0x80

// Frames between a tracepoint's caller and a tp_btf program's helper call:
// the program itself and bpf_trace_run<N> (kernel/trace/bpf_trace.c; the
// __bpf_trace_<event> stub tail-calls it).
#define kSwitchGlueFrames 2

// Set by user space before loading (read-only to the programs).
const volatile bool kernel_stacks = true;
// -callgraph fp+cfi: switch-outs carry the user registers and a copy of
// the user stack above sp (PROFCPU_LEAF_COPY_MAX bytes at most).
const volatile bool leaf_copy = false;
const volatile __u32 scope = PROFCPU_SCOPE_PROCESSES;
// PROFCPU_SCOPE_CGROUP: the cgroup's id (its inode in the v2 hierarchy) and
// its depth there (the root is 0).
const volatile __u64 cgroup_id = 0;
const volatile __u32 cgroup_level = 0;
// profcpu's pid namespace (st_dev and st_ino of /proc/self/ns/pid): events
// carry pids as it numbers them, as perf's records and /proc do, so a
// sidecar in the app's namespace sees pid 1 where the kernel says 12345.
const volatile __u64 pidns_dev = 0;
const volatile __u64 pidns_ino = 0;

// Counters user space reads (memory-mapped .bss).
__u64 losses[PROFCPU_LOSS_COUNT];
// Switch-outs sent without their stack copy: the user stack could not be
// read without faulting (a page not resident), even the smaller retry.
__u64 leaf_copies_failed;
// Stays that began before this time are not reported (user space sets it
// when a started command is released: its wait for that is not its own).
__u64 min_start_ns;

// PROFCPU_SCOPE_PROCESSES: the processes profiled, by kernel (init
// namespace) tgid. User space names processes by their pid in profcpu's
// namespace, in `requested`; each is moved here the first time one of its
// threads runs a program (only then can it be translated), and processes
// they start are added by on_fork.
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __type(key, __u32);  // kernel tgid
  __type(value, __u8);
  __uint(max_entries, 16384);
} tgids SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __type(key, __u32);  // tgid in profcpu's pid namespace
  __type(value, __u8);
  __uint(max_entries, 1024);
} requested SEC(".maps");

// A switch-out event is built here (too big for the BPF stack), then
// copied into the ring buffer at its actual size: the stacks, then the
// registers and stack copy right after them (in `leaf` when the stacks are
// full, further down in `ips` otherwise).
struct switch_out_scratch {
  struct profcpu_switch_out header;
  __u64 ips[2 * PROFCPU_MAX_STACK_DEPTH];
  __u64 leaf[PROFCPU_LEAF_REGS + PROFCPU_LEAF_COPY_MAX / 8];
};

// One per CPU for on_switch, one for snapshot_blocked: the snapshot is
// sleepable, so a switch on its CPU can run on_switch in the middle of it.
struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __type(key, __u32);
  __type(value, struct switch_out_scratch);
  __uint(max_entries, 2);
} switch_out_scratch SEC(".maps");

#define kSwitchScratch 0
#define kSnapshotScratch 1

// An on-CPU sample is built here the same way (its own map: a sample's
// interrupt can arrive while the sleepable snapshot fills its scratch).
struct sample_scratch {
  struct profcpu_sample_inline header;
  __u64 ips[2 * PROFCPU_MAX_STACK_DEPTH];
};

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __type(key, __u32);
  __type(value, struct sample_scratch);
  __uint(max_entries, 1);
} sample_scratch SEC(".maps");

// Bytes of one inline stack: user space sets it from
// kernel.perf_event_max_stack (at most PROFCPU_MAX_STACK_DEPTH frames).
const volatile __u32 inline_stack_bytes = PROFCPU_MAX_STACK_DEPTH * 8;

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __type(key, __u32);  // tid
  __type(value, struct profcpu_blocked);
  __uint(max_entries, 65536);
} blocked SEC(".maps");

// Its size is a placeholder: user space sizes it from the sampling rate.
struct {
  __uint(type, BPF_MAP_TYPE_RINGBUF);
  __uint(max_entries, 4 << 20);
} events SEC(".maps");

static __always_inline void count_loss(int reason) {
  __sync_fetch_and_add(&losses[reason], 1);
}

// task_struct::state was renamed __state in Linux 5.14.
struct task_struct___pre_5_14 {
  long state;
} __attribute__((preserve_access_index));

static __always_inline __u32 task_state(struct task_struct *task) {
  if (bpf_core_field_exists(task->__state)) return BPF_CORE_READ(task, __state);
  return (__u32)BPF_CORE_READ((struct task_struct___pre_5_14 *)task, state);
}

// The number of `pid` in profcpu's pid namespace, 0 when it has none there.
static __always_inline __u32 number_in_profcpu_ns(struct pid *pid) {
  if (pid == NULL) return 0;
  __u32 level = BPF_CORE_READ(pid, level);
  // include/linux/pid_namespace.h: MAX_PID_NS_LEVEL is 32.
  for (__u32 i = 0; i < 33; ++i) {
    if (i > level) break;
    struct upid *up = &pid->numbers[i];
    if (BPF_CORE_READ(up, ns, ns.inum) == pidns_ino) return (__u32)BPF_CORE_READ(up, nr);
  }
  return 0;
}

// The current task's process and thread ids in profcpu's pid namespace;
// false for a task outside it (which profcpu cannot see in /proc either).
// The helper answers only for a task whose own pid namespace is profcpu's;
// a task in a container (a namespace below profcpu's) has numbers in
// profcpu's namespace too, found by walking its pid's levels.
static __always_inline bool current_ns_ids(__u32 *tgid, __u32 *tid) {
  struct bpf_pidns_info ns = {};
  if (bpf_get_ns_current_pid_tgid(pidns_dev, pidns_ino, &ns, sizeof(ns)) == 0) {
    *tgid = ns.tgid;
    *tid = ns.pid;
    return true;
  }
  struct task_struct *task = (struct task_struct *)bpf_get_current_task();
  __u32 ns_tid = number_in_profcpu_ns(BPF_CORE_READ(task, thread_pid));
  __u32 ns_tgid = number_in_profcpu_ns(BPF_CORE_READ(task, group_leader, thread_pid));
  if (ns_tid == 0 || ns_tgid == 0) return false;
  *tgid = ns_tgid;
  *tid = ns_tid;
  return true;
}

// Whether the current task's process (kernel tgid `tgid`, `ns_tgid` in
// profcpu's namespace) is profiled; a requested one is moved to `tgids`.
static __always_inline bool tracked(__u32 tgid, __u32 ns_tgid) {
  if (tgid == 0) return false;
  if (bpf_map_lookup_elem(&tgids, &tgid) != NULL) return true;
  if (bpf_map_lookup_elem(&requested, &ns_tgid) == NULL) return false;
  __u8 one = 1;
  if (bpf_map_update_elem(&tgids, &tgid, &one, BPF_ANY) != 0) {
    count_loss(PROFCPU_LOSS_TGIDS_FULL);
    return false;
  }
  return true;
}

// Whether the off-CPU time of `prev`, the current task, which is switching
// out, is recorded (it has ids `ns_tgid` in profcpu's namespace).
static __always_inline bool in_scope(struct task_struct *prev, __u32 ns_tgid) {
  __u32 tgid = BPF_CORE_READ(prev, tgid);
  if (tgid == 0) return false;  // the idle tasks: their "blocking" is running the others
  if (scope == PROFCPU_SCOPE_ALL) return true;
  // The tracepoint runs in the context of `prev`, so its cgroup is the
  // current one; the ancestor at the target's depth is the target itself
  // exactly when `prev` is in the target's subtree (as cgroup perf events count).
  if (scope == PROFCPU_SCOPE_CGROUP) {
    return bpf_get_current_ancestor_cgroup_id(cgroup_level) == cgroup_id;
  }
  return tracked(tgid, ns_tgid);
}

// Reports a stay off the CPU that ended at `end_ns`.
static __always_inline void emit_offcpu(struct profcpu_blocked *b, __u64 end_ns) {
  if (b->start_ns < min_start_ns) return;
  struct profcpu_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
  if (e == NULL) {
    count_loss(PROFCPU_LOSS_RINGBUF);
    return;
  }
  e->kind = PROFCPU_EVENT_OFFCPU;
  e->pid = b->pid;
  e->tid = b->tid;
  e->cpu = b->cpu;
  e->time_ns = end_ns;
  e->value = end_ns - b->start_ns;
  e->kernel_stack = -1;
  e->user_stack = -1;
  e->state = b->state;
  e->pad = 0;
  bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);  // drained on a timer (see on_sample)
}

// The CPU time `task` has run so far (CFS's sum_exec_runtime, brought up to
// date by the scheduler before sched_switch; elsewhere as of the last tick).
static __always_inline __u64 task_runtime(struct task_struct *task) {
  return BPF_CORE_READ(task, se.sum_exec_runtime);
}

// `task` is running at `now` (switching out again, or exiting) and still
// has stay `b` on record: no switch to it was reported. Linux 6.18 does
// that: ftrace's sched_switch misses the same switches, a few per thousand
// under load, and sometimes the wakeup before it too (then the stay was
// lost, and with it 150 ms of test_offcpu's known times). The task has run
// without a break since that unreported switch (a switch-out in between
// would have been reported: this is the first), so the stay ended its CPU
// time since then before `now`. Only when even that cannot be read (a
// task that has not run, which cannot be here) does the wakeup time serve.
static __always_inline void flush_missed_switch_in(struct profcpu_blocked *b,
                                                   struct task_struct *task, __u64 now) {
  __u64 ran = task_runtime(task) - b->runtime_ns;
  __u64 end = ran < now ? now - ran : 0;
  if (end > b->start_ns && end <= now) {
    emit_offcpu(b, end);
  } else if (b->woken_ns > b->start_ns) {
    emit_offcpu(b, b->woken_ns);
  } else if (!(b->flags & PROFCPU_BLOCKED_SNAPSHOT)) {
    // A snapshot that raced with the task's wakeup: it was not blocked.
    count_loss(PROFCPU_LOSS_MISSED_SWITCH);
  }
}

// Every multiple of 8 up to PROFCPU_MAX_STACK_DEPTH * 8, and nothing above.
#define kInlineStackMask (PROFCPU_MAX_STACK_DEPTH * 8)
_Static_assert(((PROFCPU_MAX_STACK_DEPTH + 1) & PROFCPU_MAX_STACK_DEPTH) == 0,
               "PROFCPU_MAX_STACK_DEPTH + 1 must be a power of two for kInlineStackMask");

// The sizes of the registers and stack copy in a switch-out.
struct leaf_sizes {
  __u32 regs_bytes;
  __u32 copy_bytes;
};

// The stack copy is trimmed at bp + 16 when bp points into it: the repair
// after collection splices the frame-pointer chain at CFA == bp + 16 (the
// frame record the kernel's walk started from), so no byte above is read.
static __always_inline __u32 leaf_copy_keep(__u64 sp, __u64 bp, __u32 got) {
  if (bp >= sp && bp - sp + 16 < got) return (__u32)(bp - sp + 16);
  return got;
}

// A smaller second try when the full copy fails (bpf_probe_read_user does
// not fault pages in: a copy reaching a non-resident page fails whole).
#define kLeafCopyRetry 128

// Writes the user registers {bp, sp, ip} of `task` (NULL: the current task,
// a non-sleepable program) and a copy of its user stack at `leaf`, which
// has room for PROFCPU_LEAF_REGS + PROFCPU_LEAF_COPY_MAX bytes.
static __always_inline struct leaf_sizes write_leaf(__u64 *leaf, struct task_struct *task) {
  struct leaf_sizes sizes = {0, 0};
  struct task_struct *t = task != NULL ? task : bpf_get_current_task_btf();
  if (BPF_CORE_READ(t, mm) == NULL) return sizes;  // a kernel thread: no user registers
  struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(t);
  __u64 bp = PT_REGS_FP_CORE(regs);
  __u64 sp = PT_REGS_SP_CORE(regs);
  leaf[0] = bp;
  leaf[1] = sp;
  leaf[2] = PT_REGS_IP_CORE(regs);
  sizes.regs_bytes = PROFCPU_LEAF_REGS * 8;
  void *copy = &leaf[PROFCPU_LEAF_REGS];
  __u32 got = 0;
  if (task != NULL) {
    // Sleepable: this helper faults pages in.
    if (bpf_copy_from_user_task(copy, PROFCPU_LEAF_COPY_MAX, (void *)sp, task, 0) == 0) {
      got = PROFCPU_LEAF_COPY_MAX;
    }
  } else if (bpf_probe_read_user(copy, PROFCPU_LEAF_COPY_MAX, (void *)sp) == 0) {
    got = PROFCPU_LEAF_COPY_MAX;
  } else if (bpf_probe_read_user(copy, kLeafCopyRetry, (void *)sp) == 0) {
    got = kLeafCopyRetry;
  }
  if (got == 0) __sync_fetch_and_add(&leaf_copies_failed, 1);
  sizes.copy_bytes = leaf_copy_keep(sp, bp, got);
  return sizes;
}

// Sends scratch `s`, its stacks filled in (kernel then user), as thread
// `tid`'s switch-out at `time_ns`, with the user registers and stack copy
// of `task` (NULL: the current task) when leaf_copy is on.
static __always_inline void send_switch_out(struct switch_out_scratch *s, __u32 tid,
                                            __u64 time_ns, __u32 kernel_bytes,
                                            __u32 user_bytes, struct task_struct *task) {
  s->header.kind = PROFCPU_EVENT_SWITCH_OUT;
  s->header.tid = tid;
  s->header.time_ns = time_ns;
  s->header.kernel_bytes = kernel_bytes;
  s->header.user_bytes = user_bytes;
  s->header.regs_bytes = 0;
  s->header.copy_bytes = 0;
  if (leaf_copy) {
    // Right after the stacks; the bound tells the verifier the registers
    // and copy stay inside the scratch value.
    __u32 stacks = kernel_bytes + user_bytes;
    if (stacks > sizeof(s->ips)) return;
    struct leaf_sizes sizes = write_leaf((__u64 *)((char *)s->ips + stacks), task);
    s->header.regs_bytes = sizes.regs_bytes;
    s->header.copy_bytes = sizes.copy_bytes;
  }
  __u64 total = sizeof(s->header) + (__u64)kernel_bytes + user_bytes + s->header.regs_bytes +
                s->header.copy_bytes;
  if (total > sizeof(*s)) return;
  // User space drains on a timer and never waits on the ring buffer: no wakeups.
  if (bpf_ringbuf_output(&events, s, total, BPF_RB_NO_WAKEUP) != 0) {
    count_loss(PROFCPU_LOSS_RINGBUF);
  }
}

// Sends the stacks `ctx`'s task blocks with, kernel then user, inline.
struct stack_sizes {
  __u32 kernel_bytes;
  __u32 user_bytes;
};

// Writes the kernel stack of `ctx` (its first `kernel_skip` frames left
// out), then right after it the user stack, into `ips`, which has room for
// 2 * PROFCPU_MAX_STACK_DEPTH frames.
static __always_inline struct stack_sizes get_stacks(void *ctx, __u64 *ips, __u64 kernel_skip) {
  struct stack_sizes sizes = {0, 0};
  __u32 size = inline_stack_bytes;
  if (size > PROFCPU_MAX_STACK_DEPTH * 8) size = PROFCPU_MAX_STACK_DEPTH * 8;
  long kernel_got = kernel_stacks ? bpf_get_stack(ctx, ips, size, kernel_skip) : 0;
  // The mask gives the verifier its bounds (the user stack is written right
  // after the kernel's) and changes no size bpf_get_stack can return.
  sizes.kernel_bytes = kernel_got > 0 ? (__u32)kernel_got : 0;
  sizes.kernel_bytes &= kInlineStackMask;
  // A kernel thread has no user stack: bpf_get_stack fails, nothing is lost.
  long user_got = bpf_get_stack(ctx, (char *)ips + sizes.kernel_bytes, size, BPF_F_USER_STACK);
  sizes.user_bytes = user_got > 0 ? (__u32)user_got : 0;
  sizes.user_bytes &= kInlineStackMask;
  return sizes;
}

static __always_inline void emit_switch_out(void *ctx, __u32 tid, __u64 now) {
  __u32 key = kSwitchScratch;
  struct switch_out_scratch *s = bpf_map_lookup_elem(&switch_out_scratch, &key);
  if (s == NULL) return;
  // Skip the two frames of the tracing glue above __schedule (this program
  // and bpf_trace_run4) so stacks end where the thread slept.
  struct stack_sizes sizes = get_stacks(ctx, s->ips, kSwitchGlueFrames & BPF_F_SKIP_FIELD_MASK);
  send_switch_out(s, tid, now, sizes.kernel_bytes, sizes.user_bytes, NULL);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(on_switch, bool preempt, struct task_struct *prev, struct task_struct *next) {
  __u64 now = bpf_ktime_get_ns();
  __u32 prev_tid = BPF_CORE_READ(prev, pid);
  // The tracepoint runs in the context of `prev`, so the stacks taken here
  // are the ones it blocks with.
  __u32 ns_tgid, ns_tid;
  if (current_ns_ids(&ns_tgid, &ns_tid) && in_scope(prev, ns_tgid)) {
    struct profcpu_blocked *missed = bpf_map_lookup_elem(&blocked, &prev_tid);
    if (missed != NULL) flush_missed_switch_in(missed, prev, now);
    __u32 state = task_state(prev);
    if (!(state & TASK_DEAD)) {
      struct profcpu_blocked b = {};
      b.start_ns = now;
      b.runtime_ns = task_runtime(prev);
      b.state = state;
      b.cpu = bpf_get_smp_processor_id();
      b.pid = ns_tgid;
      b.tid = ns_tid;
      if (bpf_map_update_elem(&blocked, &prev_tid, &b, BPF_ANY) != 0) {
        count_loss(PROFCPU_LOSS_BLOCKED_FULL);
      } else if (b.start_ns >= min_start_ns) {
        emit_switch_out(ctx, ns_tid, now);
      }
    }
  }

  __u32 next_tid = BPF_CORE_READ(next, pid);
  struct profcpu_blocked *b = bpf_map_lookup_elem(&blocked, &next_tid);
  if (b == NULL) return 0;
  emit_offcpu(b, now);
  bpf_map_delete_elem(&blocked, &next_tid);
  return 0;
}

// Notes when a thread with a stay on record is woken (see
// flush_missed_switch_in). Runs on every wakeup: one hash lookup.
SEC("tp_btf/sched_wakeup")
int BPF_PROG(on_wakeup, struct task_struct *task) {
  __u32 tid = BPF_CORE_READ(task, pid);
  struct profcpu_blocked *b = bpf_map_lookup_elem(&blocked, &tid);
  if (b != NULL) b->woken_ns = bpf_ktime_get_ns();
  return 0;
}

// A process started by a profiled one is profiled too (as perf's inherited
// events follow it).
SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child) {
  __u32 parent_tgid = BPF_CORE_READ(parent, tgid);
  __u32 child_tgid = BPF_CORE_READ(child, tgid);
  if (child_tgid == parent_tgid) return 0;
  // The parent is the current task here.
  __u32 ns_tgid, ns_tid;
  if (!current_ns_ids(&ns_tgid, &ns_tid) || !tracked(parent_tgid, ns_tgid)) return 0;
  __u8 one = 1;
  if (bpf_map_update_elem(&tgids, &child_tgid, &one, BPF_ANY) != 0) {
    count_loss(PROFCPU_LOSS_TGIDS_FULL);
  }
  return 0;
}

// When a profiled process's last thread exits its pid may be reused: forget it.
SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_exit, struct task_struct *task) {
  __u32 tid = BPF_CORE_READ(task, pid);
  // Its last stay, if the switch that ended it went unreported: the final
  // switch-out comes after this tracepoint, and finds nothing on record.
  struct profcpu_blocked *missed = bpf_map_lookup_elem(&blocked, &tid);
  if (missed != NULL) {
    flush_missed_switch_in(missed, task, bpf_ktime_get_ns());
    bpf_map_delete_elem(&blocked, &tid);
  }
  if (BPF_CORE_READ(task, signal, live.counter) == 0) {
    __u32 tgid = BPF_CORE_READ(task, tgid);
    bpf_map_delete_elem(&tgids, &tgid);
    // The exiting task is the current one.
    __u32 ns_tgid, ns_tid;
    if (current_ns_ids(&ns_tgid, &ns_tid)) bpf_map_delete_elem(&requested, &ns_tgid);
  }
  return 0;
}

// ---- Threads already blocked when collection begins --------------------
// on_switch sees a thread only when it switches out; one that blocked
// before the programs were attached (an idle worker, a thread stuck on a
// lock) would only count from its next block. snapshot_blocked runs once
// over every task when collection of a running target begins and records,
// for each blocked thread in scope, a stay starting then, with its stacks:
// the kernel's from bpf_get_task_stack, the user's by walking its frame
// pointers from the registers it entered the kernel with (as perf's
// call chains do, here in the task's memory: a sleepable program).

// Linux 6.1 replaced cgroup::ancestor_ids[] with ancestors[].
struct cgroup___pre_6_1 {
  __u64 ancestor_ids[0];
} __attribute__((preserve_access_index));

// Whether `task` is in cgroup v2 `cgroup_id` or below it.
static __always_inline bool task_in_cgroup(struct task_struct *task) {
  struct cgroup *cgroup = BPF_CORE_READ(task, cgroups, dfl_cgrp);
  if (cgroup == NULL || BPF_CORE_READ(cgroup, level) < (int)cgroup_level) return false;
  if (bpf_core_field_exists(cgroup->ancestors)) {
    struct cgroup *ancestor = NULL;
    bpf_core_read(&ancestor, sizeof(ancestor), &cgroup->ancestors[cgroup_level]);
    return ancestor != NULL && BPF_CORE_READ(ancestor, kn, id) == cgroup_id;
  }
  __u64 id = 0;
  bpf_core_read(&id, sizeof(id), &((struct cgroup___pre_6_1 *)cgroup)->ancestor_ids[cgroup_level]);
  return id == cgroup_id;
}

static __always_inline __u32 task_cpu(struct task_struct *task) {
  if (bpf_core_field_exists(task->thread_info.cpu)) return BPF_CORE_READ(task, thread_info.cpu);
  return 0;
}

// Sends the stacks of blocked task `task` as a switch-out event at `time_ns`.
static __always_inline void emit_task_stacks(struct task_struct *task, __u32 tid, __u64 time_ns) {
  __u32 key = kSnapshotScratch;
  struct switch_out_scratch *s = bpf_map_lookup_elem(&switch_out_scratch, &key);
  if (s == NULL) return;
  __u32 size = inline_stack_bytes;
  if (size > PROFCPU_MAX_STACK_DEPTH * 8) size = PROFCPU_MAX_STACK_DEPTH * 8;
  // The kernel leaves the scheduler's own frames out of another task's
  // stack: it starts where the task called into the scheduler.
  long kernel_got = kernel_stacks ? bpf_get_task_stack(task, s->ips, size, 0) : 0;
  __u32 kernel_frames = kernel_got > 0 ? (__u32)kernel_got / 8 : 0;
  __u32 user_frames = 0;
  if (BPF_CORE_READ(task, mm) != NULL) {  // kernel threads have no user stack
    struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);
    __u64 ip = PT_REGS_IP_CORE(regs);
    __u64 fp = PT_REGS_FP_CORE(regs);
    // As perf_callchain_user walks: the interrupted address, then each
    // frame's return address, a frame being the caller's frame pointer
    // followed by the return address.
    for (__u32 i = 0; i < PROFCPU_MAX_STACK_DEPTH; ++i) {
      __u32 slot = kernel_frames + user_frames;
      if (ip == 0 || user_frames * 8 >= size || slot >= 2 * PROFCPU_MAX_STACK_DEPTH) break;
      s->ips[slot] = ip;
      ++user_frames;
      __u64 frame[2];
      if (fp == 0 || (fp & 7) != 0) break;
      if (bpf_copy_from_user_task(frame, sizeof(frame), (void *)fp, task, 0) != 0) break;
      ip = frame[1];
      // Frames lie further up the stack: a chain that does not is over
      // after this return address.
      fp = frame[0] > fp ? frame[0] : 0;
    }
  }
  send_switch_out(s, tid, time_ns, kernel_frames * 8, user_frames * 8, task);
}

SEC("iter.s/task")
int snapshot_blocked(struct bpf_iter__task *ctx) {
  struct task_struct *task = ctx->task;
  if (task == NULL) return 0;
  __u32 state = task_state(task);
  if (state == 0 || (state & TASK_DEAD)) return 0;  // running, runnable or gone
  __u32 tgid = BPF_CORE_READ(task, tgid);
  if (tgid == 0) return 0;
  __u32 ns_tid = number_in_profcpu_ns(BPF_CORE_READ(task, thread_pid));
  __u32 ns_tgid = number_in_profcpu_ns(BPF_CORE_READ(task, group_leader, thread_pid));
  if (ns_tid == 0 || ns_tgid == 0) return 0;  // outside profcpu's pid namespace
  if (scope == PROFCPU_SCOPE_CGROUP) {
    if (!task_in_cgroup(task)) return 0;
  } else if (scope != PROFCPU_SCOPE_ALL && !tracked(tgid, ns_tgid)) {
    return 0;
  }
  struct profcpu_blocked b = {};
  b.start_ns = min_start_ns != 0 ? min_start_ns : bpf_ktime_get_ns();
  b.state = state;
  b.cpu = task_cpu(task);
  b.pid = ns_tgid;
  b.tid = ns_tid;
  b.flags = PROFCPU_BLOCKED_SNAPSHOT;
  b.runtime_ns = task_runtime(task);
  __u32 tid = BPF_CORE_READ(task, pid);
  // A thread that switched out since on_switch was attached has its real
  // stay on record already.
  if (bpf_map_update_elem(&blocked, &tid, &b, BPF_NOEXIST) != 0) return 0;
  emit_task_stacks(task, ns_tid, b.start_ns);
  // One record per thread for the reader, which counts them; and a read
  // returns when its buffer fills, so user space can drain the ring buffer
  // between reads on a machine with thousands of blocked threads.
  bpf_seq_write(ctx->meta->seq, &b, sizeof(b));
  return 0;
}

// Sends each sample with its stacks inline: nothing is stored in the
// kernel, so nothing fills up and no stack is dropped for want of room; a
// full ring buffer is counted (PROFCPU_LOSS_RINGBUF) and shows as a Lost record.
SEC("perf_event")
int on_sample(struct bpf_perf_event_data *ctx) {
  __u32 pid, tid;
  // As perf numbers the sampled task for profcpu; a task outside profcpu's
  // pid namespace (a whole-machine event seen from a container) is not shown.
  if (!current_ns_ids(&pid, &tid)) return 0;
  __u32 zero = 0;
  struct sample_scratch *s = bpf_map_lookup_elem(&sample_scratch, &zero);
  if (s == NULL) return 0;
  // On the sampler's events (PERF_SAMPLE_CALLCHAIN) both walks reuse the
  // call chain perf took for the sample, as bpf_get_stackid did.
  struct stack_sizes sizes = get_stacks(ctx, s->ips, 0);
  s->header.kind = PROFCPU_EVENT_SAMPLE_INLINE;
  s->header.pid = pid;
  s->header.tid = tid;
  s->header.cpu = bpf_get_smp_processor_id();
  s->header.time_ns = bpf_ktime_get_ns();
  s->header.period = ctx->sample_period;
  s->header.kernel_bytes = sizes.kernel_bytes;
  s->header.user_bytes = sizes.user_bytes;
  __u64 total = sizeof(s->header) + (__u64)sizes.kernel_bytes + sizes.user_bytes;
  if (total > sizeof(*s)) return 0;
  // User space drains every 100 ms on a timer and never waits on the ring
  // buffer: a wakeup per drain would be an interrupt for nobody.
  if (bpf_ringbuf_output(&events, s, total, BPF_RB_NO_WAKEUP) != 0) {
    count_loss(PROFCPU_LOSS_RINGBUF);
  }
  return 0;
}
