/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>

#include <rte_atomic.h>

#include "vhost_vring.h"

/* Read a descriptor once: the guest may rewrite it while we look. */
static inline void
desc_read(const struct vring_desc *table, uint32_t idx, struct vring_desc *d)
{
	memcpy(d, &table[idx], sizeof(*d));
	rte_compiler_barrier();
}

int
hv_chain_add(const struct hv_mem *mem, uint32_t *hint, uint64_t addr, uint32_t dlen,
	     struct hv_chain *c)
{
	uint64_t left = dlen;

	if (dlen > HV_CHAIN_MAX_LEN - c->len)
		return HV_VHOST_DROP_TOO_LONG;
	while (left > 0) {
		uint64_t len = left;
		uint8_t *p = hv_mem_gpa(mem, hint, addr, &len);

		if (p == NULL)
			return HV_VHOST_DROP_BAD_ADDR;
		if (c->n_iov == HV_CHAIN_MAX_IOV)
			return HV_VHOST_DROP_TOO_MANY_SEGS;
		c->iov[c->n_iov].base = p;
		c->iov[c->n_iov].len = (uint32_t)len;
		c->n_iov++;
		addr += len;
		left -= len;
	}
	c->len += dlen;
	return 0;
}

int
hv_vring_walk(const struct vring_desc *desc, uint16_t size, const struct hv_mem *mem,
	      uint32_t *hint, uint16_t head, bool writable, bool indirect_ok, struct hv_chain *c)
{
	const struct vring_desc *table = desc;
	uint32_t table_size = size;
	uint32_t budget = size; /* descriptors left before the chain must be a loop */
	uint32_t idx = head;
	bool in_indirect = false;
	struct vring_desc d;
	int rc;

	c->head = head;
	c->n_iov = 0;
	c->len = 0;
	if (head >= size)
		return HV_VHOST_DROP_BAD_DESC_INDEX;
	for (;;) {
		if (budget-- == 0)
			return HV_VHOST_DROP_BAD_CHAIN;
		desc_read(table, idx, &d);
		if (d.flags & VRING_DESC_F_INDIRECT) {
			uint64_t len = d.len;

			if (!indirect_ok || in_indirect || (d.flags & VRING_DESC_F_NEXT))
				return HV_VHOST_DROP_BAD_INDIRECT;
			if (d.len == 0 || d.len % sizeof(struct vring_desc) != 0 ||
			    d.len / sizeof(struct vring_desc) > HV_VRING_MAX_INDIRECT)
				return HV_VHOST_DROP_BAD_INDIRECT;
			table = hv_mem_gpa(mem, hint, d.addr, &len);
			if (table == NULL || len != d.len)
				return HV_VHOST_DROP_BAD_INDIRECT;
			table_size = d.len / sizeof(struct vring_desc);
			budget = table_size;
			idx = 0;
			in_indirect = true;
			continue;
		}
		if (!!(d.flags & VRING_DESC_F_WRITE) != writable)
			return HV_VHOST_DROP_BAD_DIRECTION;
		rc = hv_chain_add(mem, hint, d.addr, d.len, c);
		if (rc != 0)
			return rc;
		if (!(d.flags & VRING_DESC_F_NEXT))
			return 0;
		idx = d.next;
		if (idx >= table_size)
			return HV_VHOST_DROP_BAD_DESC_INDEX;
	}
}
