// Layouts shared by the BPF programs (profcpu.bpf.c, compiled for the BPF
// target against vmlinux.h) and the user-space collector (bpf_session.cc).
// Plain C, fixed-width fields, no padding holes: both compilers lay them out
// alike.
#ifndef PROFCPU_COLLECTOR_BPF_BPF_EVENTS_H_
#define PROFCPU_COLLECTOR_BPF_BPF_EVENTS_H_

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

// What an entry of the `events` ring buffer is.
#define PROFCPU_EVENT_OFFCPU 1  // a thread ran again after blocking
// 2 was an on-CPU sample naming stack map ids (before stacks went inline).
// A thread in scope switched out: the stacks it blocked with, inline
// (profcpu_switch_out). Its OFFCPU event follows when it runs again.
#define PROFCPU_EVENT_SWITCH_OUT 3
// One on-CPU sample with its stacks inline (profcpu_sample_inline).
#define PROFCPU_EVENT_SAMPLE_INLINE 4

// The deepest stack an event carries, kernel and user each.
#define PROFCPU_MAX_STACK_DEPTH 127

// -callgraph fp+cfi: a switch-out carries the user registers bp, sp, ip (in
// that order: perf's PERF_REG_X86_BP, SP, IP are bits 6, 7, 8 of a
// registers mask, listed lowest bit first) and at most this many bytes of
// user stack from sp up, for unwinding the leaf by CFI after collection.
#define PROFCPU_LEAF_REGS 3
#define PROFCPU_LEAF_COPY_MAX 512

struct profcpu_event {
  __u32 kind;
  __u32 pid;  // process (tgid)
  __u32 tid;
  __u32 cpu;
  __u64 time_ns;  // CLOCK_MONOTONIC (bpf_ktime_get_ns)
  __u64 value;    // OFFCPU: nanoseconds off the CPU
  __s32 kernel_stack;  // always -1: the stacks came with the thread's
  __s32 user_stack;    // SWITCH_OUT event
  __u32 state;  // OFFCPU: the task's state when it switched out
  __u32 pad;
};

// PROFCPU_EVENT_SWITCH_OUT: this header, then kernel_bytes of kernel frames
// and user_bytes of user frames (u64 addresses, innermost first), then
// regs_bytes of user registers (0 or PROFCPU_LEAF_REGS u64s) and copy_bytes
// of user stack. Stacks travel inline rather than as stack map ids: a stack
// map drops a stack whenever its hash bucket holds another one, which on a
// whole machine (-a) lost one stack in eight within 30 s and more as the
// map filled.
struct profcpu_switch_out {
  __u32 kind;
  __u32 tid;
  __u64 time_ns;
  __u32 kernel_bytes;
  __u32 user_bytes;
  __u32 regs_bytes;
  __u32 copy_bytes;
};

// PROFCPU_EVENT_SAMPLE_INLINE: this header, then kernel_bytes of kernel
// frames and user_bytes of user frames, as in a switch-out. Inline for the
// same reason: on code without frame pointers (many distinct garbage user
// chains) a stack map lost 1.7-1.9% of the samples' stacks, biased towards
// whatever ran after the map filled.
struct profcpu_sample_inline {
  __u32 kind;
  __u32 pid;  // process (tgid) and thread in profcpu's pid namespace
  __u32 tid;
  __u32 cpu;
  __u64 time_ns;  // CLOCK_MONOTONIC (bpf_ktime_get_ns)
  __u64 period;   // the sample's period (ns for cpu-clock)
  __u32 kernel_bytes;
  __u32 user_bytes;
};

// Value of the `blocked` map (key: the kernel's thread id): a thread in
// scope that switched out and has not run since. User space reads it when
// collection ends, for the stays still in progress.
struct profcpu_blocked {
  __u64 start_ns;  // CLOCK_MONOTONIC, when it switched out
  __u64 woken_ns;  // when it was woken (sched_wakeup), 0 until then
  __u32 state;
  __u32 cpu;
  __u32 pid;  // its process and thread in profcpu's pid namespace,
  __u32 tid;  // read while it was the current task
  __u32 flags;  // PROFCPU_BLOCKED_*
  __u32 pad;
  // Its CPU time then (se.sum_exec_runtime, ns): when no switch back to it is
  // reported, the CPU time it gained since tells when it began running.
  __u64 runtime_ns;
};

// The stay was recorded by the snapshot of threads already blocked when
// collection began, not by a switch: it may have raced with the thread's
// wakeup, in which case nothing is lost when it goes unreported.
#define PROFCPU_BLOCKED_SNAPSHOT 1

// Whose off-CPU time the scheduler programs record (read-only `scope`).
#define PROFCPU_SCOPE_PROCESSES 0  // the processes in `tgids`, and those they start
#define PROFCPU_SCOPE_CGROUP 1     // every task in cgroup v2 `cgroup_id` or below it
#define PROFCPU_SCOPE_ALL 2        // every task on the machine but the idle tasks

// Indexes of the `losses` array in .bss.
#define PROFCPU_LOSS_RINGBUF 0       // the events ring buffer was full
// 1 and 2 counted stacks the stack map refused and samples the counts map
// had no room for, before on-CPU stacks went inline: nothing loses them now.
#define PROFCPU_LOSS_STACK 1
#define PROFCPU_LOSS_COUNTS_FULL 2
#define PROFCPU_LOSS_BLOCKED_FULL 3  // the blocked-threads map was full
#define PROFCPU_LOSS_TGIDS_FULL 4    // a child process could not be tracked
// The end of a stay off the CPU went unreported and could not be recovered.
#define PROFCPU_LOSS_MISSED_SWITCH 5
#define PROFCPU_LOSS_COUNT 6

#endif  // PROFCPU_COLLECTOR_BPF_BPF_EVENTS_H_
