/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The vhost-user port type's own state, shared by its two files only:
 * port_vhost.c (the ops) and rxmod.c (its interrupt moderation).
 */
#ifndef HV_SW_PORT_VHOST_H
#define HV_SW_PORT_VHOST_H

#include <cjson/cJSON.h>

#include "hv_vhost.h"
#include "sw.h"

/* Longest rxmod spec, its NUL included. */
#define SW_RXMOD_SPEC_MAX 64

/* struct sw_port_conf.priv of a vhost-user port: what its operator configured. */
struct sw_vhost_conf {
	char socket[108];
	bool client;                   /* we connect */
	uint64_t features;             /* offered virtio features, 0 = the default set */
	char rxmod[SW_RXMOD_SPEC_MAX]; /* interrupt moderation, "" = the default */
	struct sw_sock_access access;  /* server socket's owner and perm; unset: sw_vhost_access */
};

static inline struct sw_vhost_conf *
sw_vhost_conf(struct sw_port_conf *c)
{
	return (struct sw_vhost_conf *)c->priv;
}

static inline const struct sw_vhost_conf *
sw_vhost_conf_c(const struct sw_port_conf *c)
{
	return (const struct sw_vhost_conf *)c->priv;
}

/* The vhost-user type's ops (port_vhost.c). */
extern const struct sw_port_ops sw_port_vhost_ops;

/* struct sw_port.priv of a vhost-user port. */
struct sw_vhost {
	struct hv_vhost_port *dev;
	struct sw_rxmod *rxmod; /* interrupt moderation state (rxmod.c) */
};

static inline struct sw_vhost *
sw_vhost(const struct sw_port *p)
{
	return p->priv;
}

/* ---- interrupt moderation (rxmod.c) ---- */
/* Windows per queue (µs or HV_RXMOD_ADAPTIVE) from "US|adaptive[,Q:US|adaptive]...". */
int sw_rxmod_spec_parse(const char *spec, uint16_t queues, uint32_t *win, char *err, size_t errlen);
/* Apply the port's configured rxmod to it (live); nothing while it is not running. */
void sw_rxmod_apply(struct sw_port *p);
/* Control thread, about once a second: interrupt rates (irqs_ps in port.show). */
void sw_rxmod_rates(uint64_t now_ms);
int sw_rxmod_open(struct sw_port *p);
void sw_rxmod_close(struct sw_port *p);
void sw_rxmod_json(const struct sw_port *p, uint16_t qp, enum hv_vhost_dir dir, cJSON *o);
void sw_rxmod_port_json(const struct sw_port *p, cJSON *o);
/* PMD loop: once at start; after each rx poll of a queue; once per iteration. */
void sw_rxmod_pmd_enter(struct sw_pmd *pmd);
void sw_rxmod_poll_queue(struct sw_port *p, uint16_t qp);
/* Deliver what is due on this PMD's list; true while something stays owed. */
bool sw_rxmod_pmd_poll(struct sw_pmd *pmd, const struct sw_view *view);
/* Whether queue @qp's guest TX ring owes an interrupt (its polling PMD). */
bool sw_rxmod_queue_owed(const struct sw_port *p, uint16_t qp);

#endif
