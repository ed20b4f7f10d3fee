/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An 8250/16550A UART (ttyS0): transmit goes to the console (log file and
 * attached clients), receive comes from hv_vm_console_input(). Interrupts on
 * an IOAPIC pin for "transmitter empty" and "data ready"; no FIFO timing, no
 * modem lines beyond loopback-free defaults.
 */
#include <stdlib.h>
#include <string.h>

#include "vmm_internal.h"

#define UART_RBR 0 /* read: receive buffer; write: THR */
#define UART_IER 1
#define UART_IIR 2 /* read: interrupt id; write: FCR */
#define UART_LCR 3
#define UART_MCR 4
#define UART_LSR 5
#define UART_MSR 6
#define UART_SCR 7

#define IER_RDI 0x01
#define IER_THRI 0x02
#define IIR_NONE 0x01
#define IIR_THRI 0x02
#define IIR_RDI 0x04
#define IIR_FIFO 0xc0
#define LCR_DLAB 0x80
#define LSR_DR 0x01
#define LSR_THRE 0x20
#define LSR_TEMT 0x40
#define MSR_DCD_DSR_CTS 0xb0

#define RX_SIZE 1024

struct vmm_serial {
	struct hv_vm *vm;
	unsigned int irq;
	uint8_t ier, lcr, mcr, scr, dll, dlm, fcr;
	bool thr_pending; /* "transmitter empty" interrupt owed */
	uint8_t rx[RX_SIZE];
	unsigned int rx_head, rx_len;
	int level;
};

static void
serial_update_irq(struct vmm_serial *s)
{
	int level =
		((s->ier & IER_RDI) && s->rx_len > 0) || ((s->ier & IER_THRI) && s->thr_pending);

	if (level != s->level) {
		s->level = level;
		vmm_irq_line(s->vm, s->irq, level);
	}
}

static void
serial_read(void *opaque, uint64_t off, void *data, uint32_t len)
{
	struct vmm_serial *s = opaque;
	uint8_t *v = data;

	(void)len;
	switch (off) {
	case UART_RBR:
		if (s->lcr & LCR_DLAB) {
			*v = s->dll;
		} else if (s->rx_len > 0) {
			*v = s->rx[s->rx_head];
			s->rx_head = (s->rx_head + 1) % RX_SIZE;
			s->rx_len--;
		}
		break;
	case UART_IER:
		*v = (s->lcr & LCR_DLAB) ? s->dlm : s->ier;
		break;
	case UART_IIR:
		if ((s->ier & IER_RDI) && s->rx_len > 0) {
			*v = IIR_RDI;
		} else if ((s->ier & IER_THRI) && s->thr_pending) {
			*v = IIR_THRI;
			s->thr_pending = false; /* reading IIR acknowledges THRE */
		} else {
			*v = IIR_NONE;
		}
		if (s->fcr & 1)
			*v |= IIR_FIFO;
		break;
	case UART_LCR:
		*v = s->lcr;
		break;
	case UART_MCR:
		*v = s->mcr;
		break;
	case UART_LSR:
		*v = LSR_THRE | LSR_TEMT | (s->rx_len > 0 ? LSR_DR : 0);
		break;
	case UART_MSR:
		*v = MSR_DCD_DSR_CTS;
		break;
	case UART_SCR:
		*v = s->scr;
		break;
	default:
		break;
	}
	serial_update_irq(s);
}

static void
serial_write(void *opaque, uint64_t off, const void *data, uint32_t len)
{
	struct vmm_serial *s = opaque;
	uint8_t v = *(const uint8_t *)data;

	(void)len;
	switch (off) {
	case UART_RBR:
		if (s->lcr & LCR_DLAB) {
			s->dll = v;
		} else {
			vmm_console_write(s->vm, &v, 1);
			s->thr_pending = true;
		}
		break;
	case UART_IER:
		if (s->lcr & LCR_DLAB) {
			s->dlm = v;
		} else {
			/* enabling THRI with an empty transmitter raises it at once */
			if ((v & IER_THRI) && !(s->ier & IER_THRI))
				s->thr_pending = true;
			s->ier = v & 0x0f;
		}
		break;
	case UART_IIR:
		s->fcr = v;
		break;
	case UART_LCR:
		s->lcr = v;
		break;
	case UART_MCR:
		s->mcr = v;
		break;
	case UART_SCR:
		s->scr = v;
		break;
	default:
		break;
	}
	serial_update_irq(s);
}

static const struct vmm_io_ops serial_ops = {
	.read = serial_read,
	.write = serial_write,
};

struct vmm_serial *
vmm_serial_create(struct hv_vm *vm, uint16_t port, unsigned int irq)
{
	struct vmm_serial *s = calloc(1, sizeof(*s));

	if (s == NULL) {
		vmm_err("out of memory");
		return NULL;
	}
	s->vm = vm;
	s->irq = irq;
	if (vmm_bus_add(&vm->pio, port, 8, &serial_ops, s) == NULL) {
		free(s);
		vmm_err("port I/O bus full");
		return NULL;
	}
	return s;
}

size_t
vmm_serial_input(struct vmm_serial *s, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	size_t i;

	for (i = 0; i < len && s->rx_len < RX_SIZE; i++) {
		s->rx[(s->rx_head + s->rx_len) % RX_SIZE] = p[i];
		s->rx_len++;
	}
	serial_update_irq(s);
	return i;
}

void
vmm_serial_free(struct vmm_serial *s)
{
	free(s);
}
