/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CPL0 set-up of the built-in guest, run once: GDT with user segments and a
 * TSS (its RSP0 is where interrupts from CPL3 land), IDT (the #GP gate is
 * also how CPL3 sleeps: entry.S), the
 * LAPIC enabled with a 10 ms periodic timer (the wake-up for timeouts).
 * Runs emulated on hosts without hardware virtualization: short and simple.
 */
#include "guest.h"

struct tss {
	uint32_t reserved0;
	uint64_t rsp0, rsp1, rsp2;
	uint64_t reserved1;
	uint64_t ist[7];
	uint64_t reserved2;
	uint16_t reserved3;
	uint16_t iomap;
} __attribute__((packed));

struct idt_gate {
	uint16_t off_lo;
	uint16_t sel;
	uint8_t ist;
	uint8_t type;
	uint16_t off_mid;
	uint32_t off_hi;
	uint32_t zero;
} __attribute__((packed));

struct dtr {
	uint16_t limit;
	uint64_t base;
} __attribute__((packed));

volatile uint64_t irq_rx, irq_timer, irq_other;
const struct hv_guest_info *info = (const struct hv_guest_info *)HV_GUEST_INFO_ADDR;

static uint64_t gdt[8] __attribute__((aligned(16))) = {
	0,
	0,
	0x00af9a000000ffffull, /* 0x10 kernel code */
	0x00cf92000000ffffull, /* 0x18 kernel data */
	0x00cff2000000ffffull, /* 0x20 user data */
	0x00affa000000ffffull, /* 0x28 user code */
	0,
	0, /* 0x30 TSS, filled in */
};
static struct tss tss __attribute__((aligned(16)));
static struct idt_gate idt[256] __attribute__((aligned(16)));
static uint8_t kstack_irq[8192] __attribute__((aligned(16)));

extern char gp_entry[], irq_rx_stub[], irq_timer_stub[], irq_other_stub[], exc_stubs[];

static void
set_gate(unsigned int vec, void *fn)
{
	uint64_t a = (uint64_t)fn;

	idt[vec].off_lo = (uint16_t)a;
	idt[vec].sel = KERNEL_CS;
	idt[vec].type = 0x8e; /* present, DPL 0, interrupt gate */
	idt[vec].off_mid = (uint16_t)(a >> 16);
	idt[vec].off_hi = (uint32_t)(a >> 32);
}

static void
lapic_write(uint32_t reg, uint32_t v)
{
	*(volatile uint32_t *)(LAPIC_ALIAS + reg) = v;
}

void kern_setup(void);

void
kern_setup(void)
{
	uint64_t t = (uint64_t)&tss;
	struct dtr gdtr = {sizeof(gdt) - 1, (uint64_t)gdt};
	struct dtr idtr = {sizeof(idt) - 1, (uint64_t)idt};
	unsigned int v;

	tss.rsp0 = (uint64_t)(kstack_irq + sizeof(kstack_irq));
	tss.iomap = sizeof(tss);
	gdt[6] = (sizeof(tss) - 1) | ((t & 0xffffff) << 16) | (0x89ull << 40) |
		 ((t >> 24 & 0xff) << 56);
	gdt[7] = t >> 32;
	for (v = 0; v < 32; v++)
		set_gate(v, exc_stubs + 16 * v);
	set_gate(13, gp_entry);
	set_gate(VEC_RX, irq_rx_stub);
	set_gate(VEC_TIMER, irq_timer_stub);
	set_gate(VEC_OTHER, irq_other_stub);
	__asm__ volatile("lgdt %0" ::"m"(gdtr));
	__asm__ volatile("ltr %w0" ::"r"(TSS_SEL));
	__asm__ volatile("lidt %0" ::"m"(idtr));
	lapic_write(0xf0, 0x1ff);                /* enabled, spurious 0xff */
	lapic_write(0x3e0, 0xb);                 /* divide by 1 */
	lapic_write(0x320, 0x20000 | VEC_TIMER); /* periodic */
	lapic_write(0x380, 10000000);            /* 10 ms at 1 GHz */
}
