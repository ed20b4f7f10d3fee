/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A small AML (ACPI Machine Language) encoder: just what the DSDT of
 * acpi.c needs (names, integers, strings, buffers, packages, scopes,
 * devices, a method that notifies). Pure data: unit-tested without KVM.
 */
#ifndef VMM_AML_H
#define VMM_AML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AML_DEPTH 8

struct aml {
	uint8_t *buf;
	size_t cap;
	size_t len;
	bool overflow;          /* something did not fit: the result is unusable */
	size_t open[AML_DEPTH]; /* where each open PkgLength's contents start */
	unsigned int depth;
};

void aml_init(struct aml *a, uint8_t *buf, size_t cap);
void aml_bytes(struct aml *a, const void *p, size_t n);
void aml_byte(struct aml *a, uint8_t b);
/* a 4-character NameSeg (shorter names are padded with '_') */
void aml_nameseg(struct aml *a, const char *seg);
/* the smallest encoding of an integer (ZeroOp, OneOp, Byte/Word/DWord/QWordConst) */
void aml_int(struct aml *a, uint64_t v);
void aml_string(struct aml *a, const char *s);
/* an EISA id such as "PNP0A08", as the DWordConst ACPI defines for it */
void aml_eisaid(struct aml *a, const char *id);
/* Name(seg, ...): the value follows */
void aml_name(struct aml *a, const char *seg);

/* Things with a PkgLength: open, add the contents, close. */
void aml_scope(struct aml *a, const char *path); /* path: "\\_SB_" or a NameSeg */
void aml_device(struct aml *a, const char *seg);
void aml_method(struct aml *a, const char *seg, unsigned int nargs);
void aml_package(struct aml *a, unsigned int nelem);
/* Buffer(){...}: the contents are raw bytes (a resource template) */
void aml_buffer(struct aml *a);
void aml_close(struct aml *a);

/* Resource template items (ACPI 6.x, 6.4): inside aml_buffer() */
void aml_res_io(struct aml *a, uint16_t base, uint8_t len);
void aml_res_irq(struct aml *a, unsigned int irq);   /* IRQNoFlags, ISA IRQ 0..15 */
void aml_res_interrupt(struct aml *a, uint32_t gsi); /* consumer, edge, active high */
void aml_res_bus(struct aml *a, uint16_t min, uint16_t max);
void aml_res_wordio(struct aml *a, uint16_t min, uint16_t max);
void aml_res_dwordmem(struct aml *a, uint32_t min, uint32_t max);
void aml_res_end(struct aml *a);

#endif
