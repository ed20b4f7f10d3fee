/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The built-in guest's CPL0 code, kept to a minimum because every CPL0
 * instruction may be emulated (hosts without hardware virtualization):
 * start-up (then iretq to CPL3), the #GP entry (sleep until an
 * interrupt), and three-instruction interrupt stubs (count, EOI, iretq).
 */
#include "guest.h"

	.section .text.entry, "ax"
	.globl _start
_start:
	lea kstack_top(%rip), %rsp
	call kern_setup
	pushq $USER_DS
	lea ustack_top(%rip), %rax
	pushq %rax
	pushq $0x202			/* IF */
	pushq $USER_CS
	lea user_main(%rip), %rax
	pushq %rax
	iretq

/*
 * Sleep until an interrupt: CPL3 code executes the hlt at wait_hlt (lib.c)
 * with rdi = irq_rx + irq_timer as it saw them; hlt at CPL3 raises #GP,
 * which lands here at CPL0 with IF clear. Sleep only if no interrupt came
 * since the caller looked (no lost wake-up), then step over the hlt.
 * (syscall does not reach CPL0 on every host; the #GP does.)
 */
	.globl gp_entry
gp_entry:
	push %rax
	mov 16(%rsp), %rax		/* RIP, after the error code */
	cmp $wait_hlt, %rax
	jne 2f
	mov irq_rx(%rip), %rax
	add irq_timer(%rip), %rax
	cmp %rax, %rdi
	jne 1f
	sti
	hlt
	cli
1:	incq 16(%rsp)			/* past the one-byte hlt */
	pop %rax
	add $8, %rsp			/* the error code */
	iretq
2:	pop %rax
	pushq $13
	jmp exc_common

	.globl irq_rx_stub
irq_rx_stub:
	lock incq irq_rx(%rip)
	movl $0, LAPIC_EOI_ALIAS
	iretq

	.globl irq_timer_stub
irq_timer_stub:
	lock incq irq_timer(%rip)
	movl $0, LAPIC_EOI_ALIAS
	iretq

	.globl irq_other_stub
irq_other_stub:
	lock incq irq_other(%rip)
	movl $0, LAPIC_EOI_ALIAS
	iretq

/* exceptions: report 100 + vector as the exit status, then stop */
	.balign 16
	.globl exc_stubs
exc_stubs:
	.set i, 0
	.rept 32
	.balign 16
	pushq $i
	jmp exc_common
	.set i, i + 1
	.endr
exc_common:
	pop %rax
	movabs $(HV_TESTDEV_BASE + HV_TESTDEV_FAULT), %rdx
	mov %rsp, (%rdx)		/* the VMM prints the exception frame */
	add $100, %rax
	movabs $(HV_TESTDEV_BASE + HV_TESTDEV_EXIT), %rdx
	mov %rax, (%rdx)
2:	hlt
	jmp 2b

	.bss
	.balign 16
	.space 16384
	.globl kstack_top
kstack_top:
	.space 65536
	.globl ustack_top
ustack_top:

	.section .note.GNU-stack, "", @progbits
