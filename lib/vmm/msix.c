/* SPDX-License-Identifier: BSD-3-Clause */
/* MSI-X table and PBA (see msix.h). */
#include <string.h>

#include "msix.h"

void
vmm_msix_init(struct vmm_msix *m, unsigned int nvec, void (*update)(void *, unsigned int),
	      bool (*pending)(void *, unsigned int), void *opaque)
{
	unsigned int i;

	memset(m, 0, sizeof(*m));
	m->nvec = nvec > MSIX_MAX_VECTORS ? MSIX_MAX_VECTORS : nvec;
	for (i = 0; i < m->nvec; i++)
		m->e[i].ctrl = 1;
	m->update = update;
	m->pending = pending;
	m->opaque = opaque;
}

bool
vmm_msix_masked(const struct vmm_msix *m, unsigned int vec)
{
	return vec >= m->nvec || !m->enabled || m->fn_masked || (m->e[vec].ctrl & 1);
}

uint64_t
vmm_msix_addr(const struct vmm_msix *m, unsigned int vec)
{
	return vec < m->nvec ? ((uint64_t)m->e[vec].addr_hi << 32) | m->e[vec].addr_lo : 0;
}

uint32_t
vmm_msix_data(const struct vmm_msix *m, unsigned int vec)
{
	return vec < m->nvec ? m->e[vec].data : 0;
}

void
vmm_msix_table_read(struct vmm_msix *m, uint64_t off, void *data, uint32_t len)
{
	unsigned int vec = (unsigned int)(off / MSIX_ENTRY_SIZE);

	memset(data, 0, len);
	if ((len != 4 && len != 8) || (off & (len - 1)) || vec >= m->nvec)
		return;
	memcpy(data, (const uint8_t *)&m->e[vec] + (off % MSIX_ENTRY_SIZE), len);
}

void
vmm_msix_table_write(struct vmm_msix *m, uint64_t off, const void *data, uint32_t len)
{
	unsigned int vec = (unsigned int)(off / MSIX_ENTRY_SIZE);
	struct vmm_msix_entry before;
	uint8_t *p;

	if ((len != 4 && len != 8) || (off & (len - 1)) || vec >= m->nvec)
		return;
	before = m->e[vec];
	p = (uint8_t *)&m->e[vec] + (off % MSIX_ENTRY_SIZE);
	memcpy(p, data, len);
	m->e[vec].ctrl &= 1; /* only the mask bit exists */
	if (memcmp(&before, &m->e[vec], sizeof(before)) != 0 && m->update)
		m->update(m->opaque, vec);
}

void
vmm_msix_pba_read(struct vmm_msix *m, uint64_t off, void *data, uint32_t len)
{
	uint64_t bits = 0;
	unsigned int i, first = (unsigned int)(off & ~7ull) * 8;

	memset(data, 0, len);
	if ((len != 4 && len != 8) || (off & (len - 1)))
		return;
	for (i = 0; i < 64 && first + i < m->nvec; i++)
		if (vmm_msix_masked(m, first + i) && m->pending && m->pending(m->opaque, first + i))
			bits |= 1ull << i;
	if (len == 8) {
		memcpy(data, &bits, 8);
	} else {
		uint32_t half = (uint32_t)(bits >> (8 * (off & 4)));

		memcpy(data, &half, 4);
	}
}

void
vmm_msix_control(struct vmm_msix *m, uint16_t ctrl)
{
	bool en = ctrl & MSIX_CTRL_ENABLE, fm = ctrl & MSIX_CTRL_FMASK;
	unsigned int i;

	if (en == m->enabled && fm == m->fn_masked)
		return;
	m->enabled = en;
	m->fn_masked = fm;
	for (i = 0; i < m->nvec && m->update; i++)
		m->update(m->opaque, i);
}
