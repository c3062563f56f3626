// SPDX-License-Identifier: Apache-2.0
//
// sluice: pick a uniformly random socket of a SO_REUSEPORT group for every datagram.
//
// Program type BPF_PROG_TYPE_SK_REUSEPORT with a BPF_MAP_TYPE_REUSEPORT_SOCKARRAY: user space
// (crates/sluice-net/src/ebpf.rs) sizes the map to the group (EbpfLoader::set_max_entries),
// registers every socket of the group at its index, sets `sluice_num_socks` to the number of
// registered sockets (EbpfLoader::override_global) and attaches the program to the group.
// The socket count therefore cannot disagree with the group, unlike syslog-ng's
// `ebpf(reuseport(sockets(N)))`, where N is a second setting next to the number of sources.
//
// Built with Debian clang 14 by ebpf/build.sh; the object is committed and embedded with
// aya::include_bytes_aligned!. ebpf/check.sh verifies the committed object matches this source.

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_REUSEPORT_SOCKARRAY);
	/* Resized to the group size at load time. */
	__uint(max_entries, 1);
	__type(key, __u32);
	/* The kernel takes a socket fd on update; aya checks the value size equals a RawFd (4). */
	__type(value, __u32);
} sluice_socks SEC(".maps");

/* Number of sockets registered in sluice_socks; patched at load time, lives in .rodata. */
volatile const __u32 sluice_num_socks = 0;

SEC("sk_reuseport")
int sluice_select(struct sk_reuseport_md *md)
{
	__u32 n = sluice_num_socks;
	__u32 key;

	if (n == 0)
		return SK_PASS;
	key = bpf_get_prandom_u32() % n;
	/*
	 * On failure (e.g. that socket was closed and left the map) nothing is selected and
	 * SK_PASS lets the kernel fall back to its 4-tuple hash over the remaining sockets:
	 * the datagram is still delivered.
	 */
	bpf_sk_select_reuseport(md, &sluice_socks, &key, 0);
	return SK_PASS;
}

/*
 * Neither helper used here is GPL-only (bpf_get_prandom_u32, bpf_sk_select_reuseport), so the
 * program carries the project's own license.
 */
char _license[] SEC("license") = "Apache-2.0";
