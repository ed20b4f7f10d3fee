/* SPDX-License-Identifier: BSD-3-Clause */
/* MP table (see mptable.h). */
#include <string.h>

#include "mptable.h"
#include "le_bytes.h"

#define MPC_HDR_LEN 44
#define MPC_CPU_LEN 20
#define MPC_SHORT_LEN 8
#define ISA_IRQS 16

size_t
mptable_build(uint8_t *buf, size_t len, uint32_t base, unsigned int ncpus)
{
	size_t cfg_len = MPC_HDR_LEN + ncpus * MPC_CPU_LEN + (1 + 1 + ISA_IRQS + 2) * MPC_SHORT_LEN;
	uint8_t *fp = buf, *mpc = buf + 16, *p;
	unsigned int i, entries = 0;

	if (ncpus == 0 || ncpus > 254 || len < 16 + cfg_len)
		return 0;
	memset(buf, 0, 16 + cfg_len);
	/* floating pointer */
	memcpy(fp, "_MP_", 4);
	le_put32(fp + 4, base + 16);
	fp[8] = 1; /* length in 16-byte units */
	fp[9] = 4; /* spec 1.4 */
	/* config table */
	memcpy(mpc, "PCMP", 4);
	le_put16(mpc + 4, (uint16_t)cfg_len);
	mpc[6] = 4;
	memcpy(mpc + 8, "HVSWITCH", 8);
	memcpy(mpc + 16, "HVVMM       ", 12);
	le_put32(mpc + 36, MPTABLE_LAPIC_ADDR);
	p = mpc + MPC_HDR_LEN;
	for (i = 0; i < ncpus; i++, p += MPC_CPU_LEN, entries++) {
		p[0] = 0;                    /* processor */
		p[1] = (uint8_t)i;           /* LAPIC id */
		p[2] = 0x14;                 /* LAPIC version */
		p[3] = 1 | (i == 0 ? 2 : 0); /* enabled, BSP */
		le_put32(p + 4, 0x600);      /* signature: family 6 */
		le_put32(p + 8, 0x201);      /* features: FPU, APIC */
	}
	p[0] = 1; /* bus 0: ISA */
	p[1] = 0;
	memcpy(p + 2, "ISA   ", 6);
	p += MPC_SHORT_LEN;
	entries++;
	p[0] = 2; /* IOAPIC */
	p[1] = (uint8_t)ncpus;
	p[2] = 0x11;
	p[3] = 1; /* enabled */
	le_put32(p + 4, MPTABLE_IOAPIC_ADDR);
	p += MPC_SHORT_LEN;
	entries++;
	for (i = 0; i < ISA_IRQS; i++, p += MPC_SHORT_LEN, entries++) {
		p[0] = 3; /* I/O interrupt: ISA IRQ i on IOAPIC pin i (KVM's routing) */
		p[1] = 0; /* INT */
		p[4] = 0; /* bus */
		p[5] = (uint8_t)i;
		p[6] = (uint8_t)ncpus;
		p[7] = (uint8_t)i;
	}
	for (i = 0; i < 2; i++, p += MPC_SHORT_LEN, entries++) {
		p[0] = 4;              /* local interrupt */
		p[1] = i == 0 ? 3 : 1; /* ExtINT on LINT0, NMI on LINT1 */
		p[6] = 0xff;           /* every LAPIC */
		p[7] = (uint8_t)i;
	}
	le_put16(mpc + 34, (uint16_t)entries);
	mpc[7] = table_checksum(mpc, cfg_len);
	fp[10] = table_checksum(fp, 16);
	return 16 + cfg_len;
}
