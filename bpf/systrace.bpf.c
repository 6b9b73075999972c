// SPDX-License-Identifier: GPL-2.0 OR MIT
//
// oslab trace's in-kernel aggregation of a command's system calls.
//
// Attached as raw tracepoints (the arguments as the kernel passes them, no
// perf record built per call, and a detach that does not wait for an RCU grace
// period) to sys_enter, sys_exit and sched_process_fork. It follows the process tree that user space seeds
// in `tracked` (the held command) into every process it forks, and for each
// (process, phase, system call, calling address) sums the calls, the errors,
// the wall time inside and a histogram of it, so that user space reads a few
// hundred map entries instead of a record per call. The maps are preallocated
// and shared by the CPUs (atomic adds): a thousand execs of a dynamic program
// insert ~25 000 call sites and ~50 000 histogram buckets in a burst, and maps
// that allocate per insert (BPF_F_NO_PREALLOC) failed some of those inserts;
// per-CPU maps of this size took 80 ms to create.
//
// Built by bpf/build.sh into src/platform/linux/bpf/systrace.bpf.o, which is
// committed: building oslab needs no clang. .ci/run rebuilds it and checks the
// committed object is this source's.

#include <linux/types.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

char LICENSE[] SEC("license") = "Dual MIT/GPL";

// Only the field read, relocated by the loader against the kernel's BTF.
struct task_struct {
	int pid;
} __attribute__((preserve_access_index));

// Set by the loader before the programs load (read-only to them).
// The offset of the user instruction pointer in struct pt_regs.
const volatile __u32 ip_offset = 128;
// This architecture's execve number.
const volatile __s64 execve_nr = 59;
// The marker call (a number no kernel implements) and whether to count only
// between its first two calls.
const volatile __s64 mark_nr = 0x6f736c62;
const volatile __u32 windowed = 0;

#define PHASE_EXEC 0
#define PHASE_OTHER 1
// In a window: made by the thread that made the markers.
#define PHASE_MARKER 2

// Fine latency buckets: 4 per power of two.
#define SUB 4

struct call_key {
	__u32 tgid;
	__u32 phase;
	__s64 nr;
	__u64 ip;
};

struct call_value {
	__u64 calls;
	__u64 total_ns;
	__u64 errors;
};

struct hist_key {
	struct call_key call;
	__u32 bucket;
	__u32 pad;
};

struct errno_key {
	struct call_key call;
	__s32 err;
	__u32 pad;
};

struct open_call {
	__u64 start;
	__s64 nr;
	__u64 ip;
	__u32 tgid;
	__u32 phase;
};

// The tree's state, one entry.
struct tree {
	__u64 root;    // the held command's tgid
	__u64 begun;   // the root has begun its execve
	__u64 marks;   // marker calls seen
	__u64 dropped; // map updates that failed (a full map): counts are lower bounds
	__u64 marker;  // pid_tgid of the first marker's caller
	__u64 opened;  // time of the first marker
	__u64 closed;  // time of the second marker
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct tree);
} state SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u32);
} tracked SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, struct open_call);
} inflight SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, struct call_key);
	__type(value, struct call_value);
} calls SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 262144);
	__type(key, struct hist_key);
	__type(value, __u64);
} hist SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct errno_key);
	__type(value, __u64);
} errnos SEC(".maps");

static __always_inline struct tree *tree(void)
{
	__u32 zero = 0;
	return bpf_map_lookup_elem(&state, &zero);
}

static __always_inline void dropped(void)
{
	struct tree *t = tree();
	if (t)
		__sync_fetch_and_add(&t->dropped, 1);
}

// floor(log2(v)) for v > 0.
static __always_inline __u32 log2_u64(__u64 v)
{
	__u32 r = 0, s;
	s = (v > 0xffffffffULL) << 5; v >>= s; r |= s;
	s = (v > 0xffffULL) << 4; v >>= s; r |= s;
	s = (v > 0xffULL) << 3; v >>= s; r |= s;
	s = (v > 0xfULL) << 2; v >>= s; r |= s;
	s = (v > 0x3ULL) << 1; v >>= s; r |= s;
	r |= (v >> 1);
	return r;
}

// Bucket 4*l + s holds [ (4+s) << (l-2), (5+s) << (l-2) ) for l >= 2.
static __always_inline __u32 bucket_of(__u64 ns)
{
	if (ns < 4)
		return ns < 2 ? 0 : 4 + (ns & 1) * 2;
	__u32 l = log2_u64(ns);
	return l * SUB + ((ns >> (l - 2)) & 3);
}

static __always_inline void add(__u64 *cell, __u64 n)
{
	__sync_fetch_and_add(cell, n);
}

// sched_process_fork(struct task_struct *parent, struct task_struct *child)
SEC("raw_tracepoint/sched_process_fork")
int on_fork(struct bpf_raw_tracepoint_args *ctx)
{
	__u32 parent = bpf_get_current_pid_tgid() >> 32;
	if (!bpf_map_lookup_elem(&tracked, &parent))
		return 0;
	struct task_struct *child = (struct task_struct *)ctx->args[1];
	__u32 one = 1, key = BPF_CORE_READ(child, pid);
	if (bpf_map_update_elem(&tracked, &key, &one, BPF_ANY))
		dropped();
	return 0;
}

// sys_enter(struct pt_regs *regs, long id)
SEC("raw_tracepoint/sys_enter")
int on_enter(struct bpf_raw_tracepoint_args *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id;
	if (!bpf_map_lookup_elem(&tracked, &tgid))
		return 0;
	__s64 nr = ctx->args[1];
	__u32 phase = PHASE_OTHER;
	struct tree *t = tree();
	if (!t)
		return 0;
	if (tgid == t->root && !t->begun) {
		// The held child's own calls before its execve are oslab's.
		if (nr != execve_nr)
			return 0;
		t->begun = 1;
		phase = PHASE_EXEC;
	}
	if (nr == mark_nr) {
		__u64 seen = __sync_fetch_and_add(&t->marks, 1);
		if (seen == 0) {
			t->marker = id;
			t->opened = bpf_ktime_get_ns();
		} else if (seen == 1) {
			t->closed = bpf_ktime_get_ns();
		}
		return 0;
	}
	if (windowed) {
		if (t->marks != 1)
			return 0;
		if (id == t->marker)
			phase = PHASE_MARKER;
	}
	__u64 ip = 0;
	bpf_probe_read_kernel(&ip, sizeof(ip), (char *)ctx->args[0] + ip_offset);
	// A task's entry is reused call after call (start 0: no call open), so a call
	// costs lookups, not a hash insert and delete.
	struct open_call *open = bpf_map_lookup_elem(&inflight, &tid);
	if (open) {
		open->nr = nr;
		open->ip = ip;
		open->tgid = tgid;
		open->phase = phase;
		open->start = bpf_ktime_get_ns();
		return 0;
	}
	struct open_call call = {
		.nr = nr,
		.ip = ip,
		.tgid = tgid,
		.phase = phase,
		.start = bpf_ktime_get_ns(),
	};
	if (bpf_map_update_elem(&inflight, &tid, &call, BPF_ANY))
		dropped();
	return 0;
}

static __always_inline void count(struct call_key *key, __u64 ns, __s64 ret)
{
	struct call_value *v = bpf_map_lookup_elem(&calls, key);
	if (!v) {
		struct call_value zero = {};
		if (bpf_map_update_elem(&calls, key, &zero, BPF_NOEXIST) &&
		    !bpf_map_lookup_elem(&calls, key)) {
			dropped();
			return;
		}
		v = bpf_map_lookup_elem(&calls, key);
		if (!v)
			return;
	}
	add(&v->calls, 1);
	add(&v->total_ns, ns);
	struct hist_key hk = { .call = *key, .bucket = bucket_of(ns) };
	__u64 *h = bpf_map_lookup_elem(&hist, &hk);
	if (h) {
		add(h, 1);
	} else {
		__u64 one = 1;
		if (bpf_map_update_elem(&hist, &hk, &one, BPF_NOEXIST))
			dropped();
	}
	if (ret < 0 && ret >= -4095) {
		add(&v->errors, 1);
		struct errno_key ek = { .call = *key, .err = (__s32)-ret };
		__u64 *e = bpf_map_lookup_elem(&errnos, &ek);
		if (e) {
			__sync_fetch_and_add(e, 1);
		} else {
			__u64 one = 1;
			if (bpf_map_update_elem(&errnos, &ek, &one, BPF_NOEXIST))
				dropped();
		}
	}
}

// sys_exit(struct pt_regs *regs, long ret)
SEC("raw_tracepoint/sys_exit")
int on_exit(struct bpf_raw_tracepoint_args *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct open_call *call = bpf_map_lookup_elem(&inflight, &tid);
	if (!call || !call->start)
		return 0;
	__u64 now = bpf_ktime_get_ns();
	struct call_key key = {
		.tgid = call->tgid,
		.phase = call->phase,
		.nr = call->nr,
		.ip = call->ip,
	};
	__u64 ns = now > call->start ? now - call->start : 0;
	call->start = 0;
	count(&key, ns, (__s64)ctx->args[1]);
	return 0;
}
