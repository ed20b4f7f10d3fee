/* SPDX-License-Identifier: BSD-3-Clause */
/* The built-in test guest: shared definitions of its CPL0 and CPL3 parts. */
#ifndef GUEST_H
#define GUEST_H

#include "hv_guest_abi.h"

#define KERNEL_CS 0x10
#define KERNEL_DS 0x18
#define USER_DS (0x20 | 3)
#define USER_CS (0x28 | 3)
#define TSS_SEL 0x30

#define VEC_RX 0x40
#define VEC_TIMER 0x41
#define VEC_OTHER 0x42

#define LAPIC_ALIAS (HV_GUEST_LAPIC_ALIAS + HV_GUEST_LAPIC_IN_ALIAS)
#define LAPIC_EOI_ALIAS 0x7fe000b0

#ifndef __ASSEMBLER__
#include <stddef.h>
#include <stdint.h>

extern volatile uint64_t irq_rx, irq_timer, irq_other;
extern const struct hv_guest_info *info;

/* lib.c */
void *memcpy(void *d, const void *s, size_t n);
void *memset(void *d, int c, size_t n);
int memcmp(const void *a, const void *b, size_t n);
size_t strlen(const char *s);
void print(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void guest_exit(int status) __attribute__((noreturn));
void guest_mark(uint64_t n);
uint64_t now_ns(void);
/* sleep until an interrupt (RX or the 10 ms timer) */
void wait_irq(void);
/* the same, unless an interrupt came since irq_rx + irq_timer was @p seen */
void wait_irq_since(uint64_t seen);
/* the value of key=... in the command line, NULL when absent */
const char *arg_str(const char *key, char *buf, size_t len);
uint64_t arg_num(const char *key, uint64_t dflt);
int parse_ip(const char *s, uint32_t *ip);

static inline void
mb(void)
{
	__asm__ volatile("mfence" ::: "memory");
}

static inline void
barrier(void)
{
	__asm__ volatile("" ::: "memory");
}

/* virtio.c */
int vnet_init(void);
/* a received frame (without the virtio-net header), or NULL */
uint8_t *vnet_rx(uint32_t *len);
/* give the buffer of the last vnet_rx() frames back (all of them) */
void vnet_rx_done(void);
/* a TX buffer to fill (NULL when the ring is full) */
uint8_t *vnet_tx_buf(void);
void vnet_tx_commit(uint32_t len);
/* kick TX if frames are queued */
void vnet_tx_flush(void);
/* frames the backend has not completed yet */
uint32_t vnet_tx_inflight(void);
extern uint64_t vnet_kicks;
/* kick even when the backend says it polls (VRING_USED_F_NO_NOTIFY) */
extern int vnet_kick_always;
/* negotiate EVENT_IDX (set before vnet_init); whether it was */
extern int vnet_want_event_idx, vnet_event_idx;
/* ask the backend for RX interrupts (1) or not (0: polling); arming fences */
void vnet_rx_irq(int on);
/* frames are waiting in the RX ring */
int vnet_rx_ready(void);
/* mask or unmask the RX queue's MSI-X vector; its PBA bit */
void vnet_rx_vector_mask(int masked);
int vnet_rx_vector_pending(void);
/* change the IDT vector the RX queue's MSI-X message carries */
void vnet_rx_vector_retarget(uint32_t vector);

/* net.c */
int net_main(void);
#endif
#endif
