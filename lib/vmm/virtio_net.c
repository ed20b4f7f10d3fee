/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * virtio-net-pci whose rings a vhost-user backend (a hvswitch port) serves.
 *
 * The VMM is only the control plane: it relays feature negotiation, hands the
 * backend the memfd (SET_MEM_TABLE), one eventfd per queue registered with
 * KVM_IOEVENTFD on the queue's notify address (kicks never leave the kernel)
 * and one eventfd per queue bound with KVM_IRQFD to a GSI routed to the
 * queue's MSI-X message (the backend interrupts the guest directly).
 *
 * MSI-X masking: while a queue's vector is masked its irqfd is detached, so
 * the backend's signals accumulate in the eventfd; the PBA reports them and
 * unmasking delivers one interrupt (KVM_SIGNAL_MSI) before re-attaching.
 *
 * The vhost-user protocol runs on a thread of its own (the worker): a vCPU's
 * register write (DRIVER_OK, reset) only records what the driver wants and
 * wakes the worker, so that no vCPU ever waits on the switch. A reset
 * completes when the worker has stopped the rings; until then status reads
 * non-zero, which the driver waits out (virtio 1.2, 4.1.4.3.2).
 *
 * When the backend goes away the worker reconnects every RECONNECT_MS and
 * restarts the rings with the features the guest negotiated, from the used
 * index in guest memory. Link changes are configuration changes (status
 * bit, config_generation, config interrupt). A backend that no longer offers
 * a negotiated feature gets the device NEEDS_RESET, so that the driver
 * renegotiates.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <linux/virtio_config.h>
#include <linux/virtio_net.h>
#include <linux/virtio_ring.h>

#include "vhost_user_frontend.h"
#include "virtio_net_ctrl.h"
#include "virtio_pci.h"
#include "vmm_internal.h"

#define NET_MAX_PAIRS 4
#define NET_MAX_QUEUES (2 * NET_MAX_PAIRS + 1) /* and the control queue */
#define NET_SLOT 1
#define RECONNECT_MS 200

#define F(n) (1ull << (n))

/* What the backend may offer that we pass on to the guest. */
#define NET_RELAYED                                                                                \
	(F(VIRTIO_NET_F_CSUM) | F(VIRTIO_NET_F_GUEST_CSUM) | F(VIRTIO_NET_F_GUEST_TSO4) |          \
	 F(VIRTIO_NET_F_GUEST_TSO6) | F(VIRTIO_NET_F_GUEST_ECN) | F(VIRTIO_NET_F_HOST_TSO4) |      \
	 F(VIRTIO_NET_F_HOST_TSO6) | F(VIRTIO_NET_F_HOST_ECN) | F(VIRTIO_NET_F_MRG_RXBUF) |        \
	 F(VIRTIO_RING_F_INDIRECT_DESC) | F(VIRTIO_RING_F_EVENT_IDX) | F(VIRTIO_F_VERSION_1) |     \
	 F(VIRTIO_F_IN_ORDER))
/* What the VMM itself implements (device config space; the control queue
 * when the switch port has several queue pairs). */
#define NET_OWN (F(VIRTIO_NET_F_MAC) | F(VIRTIO_NET_F_STATUS))
#define NET_MQ (F(VIRTIO_NET_F_MQ) | F(VIRTIO_NET_F_CTRL_VQ))

struct vmm_virtio_net {
	struct hv_vm *vm;
	struct vmm_virtio_pci vp;
	uint16_t max_pairs; /* offered (max_virtqueue_pairs), from the first connection */
	uint16_t nq;        /* transport queues: 2, or 2 * max_pairs + 1 */
	int kickfd[NET_MAX_QUEUES];
	int callfd[NET_MAX_QUEUES];
	int gsi[NET_MAX_QUEUES];
	bool irqfd_on[NET_MAX_QUEUES];

	/* the worker's own */
	struct vu_frontend fe; /* fe.fd also changes under vm->lock (for free) */
	pthread_t worker;
	bool worker_on;
	int wake_fd;
	bool running;                             /* rings started on the backend */
	uint16_t pairs_on;                        /* queue pairs enabled on the backend */
	struct vu_ring run_rings[NET_MAX_QUEUES]; /* the rings started */
	unsigned int run_nrings;
	uint64_t next_try_ms;

	/* under vm->lock: what the driver wants, and what the worker reports */
	bool quit;
	bool want_run;    /* DRIVER_OK, rings checked, not failed */
	bool restart;     /* rings ran before: restart from the used index */
	unsigned int req; /* bumped whenever want_run or the rings change */
	struct vu_ring rings[NET_MAX_QUEUES];
	unsigned int nrings;
	uint16_t want_pairs; /* VQ_PAIRS_SET */
	bool ctrl_on;        /* CTRL_VQ negotiated and the queue set up */
	uint16_t ctrl_q;
	struct vmm_net_ctrlq ctrl;
	bool connected;
	uint64_t backend;    /* the backend's latest offer */
	uint64_t offered;    /* to the guest */
	uint64_t offer_next; /* offered after the next reset */
	uint64_t acked;      /* to the backend */
	unsigned int reconnects;
};

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void
net_log(struct vmm_virtio_net *n, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Under vm->lock (the console is the vCPUs' too). */
static void
net_log(struct vmm_virtio_net *n, const char *fmt, ...)
{
	char line[256];
	va_list ap;
	int len;

	len = snprintf(line, sizeof(line), "[vmm] net: ");
	va_start(ap, fmt);
	len += vsnprintf(line + len, sizeof(line) - (size_t)len - 1, fmt, ap);
	va_end(ap);
	if (len > (int)sizeof(line) - 2)
		len = (int)sizeof(line) - 2;
	line[len++] = '\n';
	vmm_console_write(n->vm, line, (size_t)len);
}

static void
wake_worker(struct vmm_virtio_net *n)
{
	uint64_t one = 1;

	if (write(n->wake_fd, &one, sizeof(one)) < 0) {
		/* the counter cannot overflow: the worker drains it */
	}
}

/* ---- interrupts ---- */

static uint64_t
drain(int fd)
{
	uint64_t v = 0;

	if (read(fd, &v, sizeof(v)) != sizeof(v))
		return 0;
	return v;
}

/* Bring each queue's irqfd in line with its vector's MSI-X state. */
static void
net_vectors_changed(void *opaque)
{
	struct vmm_virtio_net *n = opaque;
	struct vmm_virtio_pci *vp = &n->vp;
	unsigned int q;

	for (q = 0; q < n->nq; q++) {
		uint16_t vec = vp->q[q].vector;
		bool want = vec != MSIX_NO_VECTOR && !vmm_msix_masked(&vp->msix, vec);

		if (want) {
			vmm_msi_route_set(n->vm, n->gsi[q], vmm_msix_addr(&vp->msix, vec),
					  vmm_msix_data(&vp->msix, vec));
			vmm_routes_commit(n->vm);
			if (!n->irqfd_on[q]) {
				/* what arrived while masked is delivered now, once */
				if (drain(n->callfd[q]) != 0)
					vmm_signal_msi(n->vm, vmm_msix_addr(&vp->msix, vec),
						       vmm_msix_data(&vp->msix, vec));
				if (vmm_irqfd(n->vm, n->callfd[q], n->gsi[q], true) == 0)
					n->irqfd_on[q] = true;
			}
		} else if (n->irqfd_on[q]) {
			vmm_irqfd(n->vm, n->callfd[q], n->gsi[q], false);
			n->irqfd_on[q] = false;
		}
	}
}

static bool
net_vector_pending(void *opaque, unsigned int vec)
{
	struct vmm_virtio_net *n = opaque;
	unsigned int q;

	for (q = 0; q < n->nq; q++) {
		struct pollfd p = {.fd = n->callfd[q], .events = POLLIN};

		if (n->vp.q[q].vector == vec && !n->irqfd_on[q] && poll(&p, 1, 0) == 1)
			return true;
	}
	return false;
}

/* ---- device config ---- */

static void
net_config_read(void *opaque, uint64_t off, void *data, uint32_t len)
{
	struct vmm_virtio_net *n = opaque;
	struct virtio_net_config cfg;

	memset(&cfg, 0, sizeof(cfg));
	memcpy(cfg.mac, n->vm->cfg.mac, sizeof(cfg.mac));
	/* a device that needs reset passes no traffic: say so to drivers that
	 * only watch the link */
	cfg.status = n->connected && !(n->vp.status & VIRTIO_CONFIG_S_NEEDS_RESET)
			     ? VIRTIO_NET_S_LINK_UP
			     : 0;
	cfg.max_virtqueue_pairs = n->max_pairs;
	cfg.mtu = n->vm->cfg.mtu;
	/* up to the MTU: the fields after it belong to features we do not offer */
	vmm_virtio_config_copy(&cfg, offsetof(struct virtio_net_config, speed), off, data, len);
}

static void *
ctrl_gpa(void *ctx, uint64_t gpa, uint64_t len)
{
	return vmm_gpa_to_hva(ctx, gpa, len);
}

/* The rings as the driver set them up, for the backend (the data queues of
 * the pairs negotiated; pair 0 must be there, the others only if enabled)
 * and the control queue; -1 when one is off or outside guest memory. */
static int
net_snapshot_rings(struct vmm_virtio_net *n)
{
	struct hv_vm *vm = n->vm;
	uint64_t f = n->vp.driver_features;
	unsigned int q, pairs = (f & F(VIRTIO_NET_F_MQ)) ? n->max_pairs : 1;

	n->nrings = 0;
	for (q = 0; q < 2 * pairs; q++) {
		struct vmm_virtio_queue *vq = &n->vp.q[q];
		unsigned int num = vq->size;
		void *desc = vmm_gpa_to_hva(vm, vq->desc, num * sizeof(struct vring_desc));
		void *avail = vmm_gpa_to_hva(vm, vq->avail,
					     offsetof(struct vring_avail, ring) +
						     (num + 1) * sizeof(__virtio16));
		void *used = vmm_gpa_to_hva(vm, vq->used,
					    offsetof(struct vring_used, ring) +
						    num * sizeof(struct vring_used_elem) +
						    sizeof(__virtio16));

		if (!vq->enabled && q >= 2)
			continue;
		if (!vq->enabled || desc == NULL || avail == NULL || used == NULL)
			return vmm_err("queue %u not enabled or outside guest memory", q);
		n->rings[n->nrings++] = (struct vu_ring){
			.index = (uint16_t)q,
			.num = vq->size,
			.desc_ua = (uintptr_t)desc,
			.avail_ua = (uintptr_t)avail,
			.used_ua = (uintptr_t)used,
			.kickfd = n->kickfd[q],
			.callfd = n->callfd[q],
		};
	}
	n->ctrl_on = false;
	if (f & F(VIRTIO_NET_F_CTRL_VQ)) {
		/* 5.1.2: the control queue follows the pairs negotiated */
		struct vmm_virtio_queue *vq;

		n->ctrl_q = (uint16_t)(2 * pairs);
		vq = &n->vp.q[n->ctrl_q];
		if (n->ctrl_q >= n->nq || !vq->enabled)
			return vmm_err("control queue %u not enabled", n->ctrl_q);
		vmm_net_ctrl_init(&n->ctrl, vq->size, vq->desc, vq->avail, vq->used,
				  (uint16_t)pairs, ctrl_gpa, vm);
		n->ctrl_on = true;
	}
	n->want_pairs = 1;
	return 0;
}

/* vCPU, under vm->lock: never waits on the backend. */
static bool
net_driver_ok(void *opaque)
{
	struct vmm_virtio_net *n = opaque;
	uint64_t lost =
		n->vp.driver_features & ~(n->backend | NET_OWN | NET_MQ | F(VIRTIO_NET_F_MTU));

	if (lost) {
		net_log(n, "switch port no longer offers features 0x%" PRIx64, lost);
		return false;
	}
	if (net_snapshot_rings(n) != 0) {
		net_log(n, "starting rings: %s", hv_vmm_error());
		return false;
	}
	n->acked = n->vp.driver_features & n->backend;
	n->want_run = true;
	n->restart = false;
	n->req++;
	wake_worker(n);
	return true; /* started by the worker, now or on reconnect */
}

/* vCPU, under vm->lock: done now unless the backend still runs the rings. */
static bool
net_reset(void *opaque)
{
	struct vmm_virtio_net *n = opaque;

	n->acked = 0;
	n->ctrl_on = false;
	n->offered = n->offer_next;
	n->vp.device_features = n->offered;
	if (!n->want_run && !n->running)
		return true;
	n->want_run = false;
	n->req++;
	wake_worker(n);
	return false;
}

static const struct vmm_virtio_ops net_ops = {
	.config_read = net_config_read,
	.driver_ok = net_driver_ok,
	.reset = net_reset,
	.vectors_changed = net_vectors_changed,
	.vector_pending = net_vector_pending,
};

static uint64_t
net_offer(const struct vmm_virtio_net *n, uint64_t backend)
{
	return (backend & NET_RELAYED) | NET_OWN | (n->vm->cfg.mtu ? F(VIRTIO_NET_F_MTU) : 0) |
	       (n->max_pairs > 1 && (backend & F(VIRTIO_NET_F_MQ)) ? NET_MQ : 0);
}

/* ---- the worker: all vhost-user traffic ---- */

static void
net_disconnect(struct vmm_virtio_net *n, bool log)
{
	pthread_mutex_lock(&n->vm->lock);
	vu_close(&n->fe);
	n->running = false;
	n->next_try_ms = now_ms() + RECONNECT_MS;
	if (n->connected) {
		n->connected = false;
		vmm_virtio_pci_config_changed(&n->vp); /* link down */
		if (log)
			net_log(n, "switch port disconnected; reconnecting to %s",
				n->vm->port_socket);
	}
	if (n->vp.resetting)
		vmm_virtio_pci_reset_done(&n->vp); /* no backend runs the rings now */
	pthread_mutex_unlock(&n->vm->lock);
}

static void
net_try_connect(struct vmm_virtio_net *n)
{
	struct vu_frontend fe = {.fd = -1};
	struct vmm_virtio_pci *vp = &n->vp;
	int rc;

	n->next_try_ms = now_ms() + RECONNECT_MS;
	if (vu_open(&fe, n->vm->port_socket) != 0)
		return;
	/* published first, so that vmm_virtio_net_free can cut a handshake
	 * with a switch that does not answer */
	pthread_mutex_lock(&n->vm->lock);
	n->fe.fd = n->quit ? -1 : fe.fd;
	pthread_mutex_unlock(&n->vm->lock);
	rc = n->fe.fd >= 0 ? vu_handshake(&fe) : -1;
	pthread_mutex_lock(&n->vm->lock);
	if (rc != 0 || n->quit) {
		vu_close(&fe);
		n->fe.fd = -1;
		pthread_mutex_unlock(&n->vm->lock);
		return;
	}
	n->fe = fe;
	n->connected = true;
	n->backend = fe.features;
	n->offer_next = net_offer(n, fe.features);
	if (!(vp->status & VIRTIO_CONFIG_S_FEATURES_OK))
		vp->device_features = n->offered = n->offer_next;
	n->reconnects++;
	if (n->want_run && (n->acked & F(VIRTIO_NET_F_MQ)) && fe.queue_pairs < n->max_pairs) {
		net_log(n, "switch port has %u queue pairs, not %u; device needs reset",
			fe.queue_pairs, n->max_pairs);
		n->want_run = false;
		vmm_virtio_pci_needs_reset(vp);
	} else if (n->want_run && (n->acked & ~fe.features)) {
		net_log(n,
			"switch port no longer offers features 0x%" PRIx64 "; device needs reset",
			n->acked & ~fe.features);
		n->want_run = false;
		vmm_virtio_pci_needs_reset(vp);
	} else if (!n->want_run) {
		net_log(n, "reconnected to %s", n->vm->port_socket);
	}
	vmm_virtio_pci_config_changed(vp); /* link up */
	pthread_mutex_unlock(&n->vm->lock);
}

static int
net_start_rings(struct vmm_virtio_net *n, uint64_t acked, struct vu_ring *rings,
		unsigned int nrings, uint16_t pairs, bool restart)
{
	struct vu_mem_region regions[2];
	struct hv_vm *vm = n->vm;
	unsigned int q, nreg = 1;

	regions[0] = (struct vu_mem_region){0, vm->low_size, (uintptr_t)vm->mem, 0, vm->mem_fd};
	if (vm->mem_size > vm->low_size) {
		regions[1] = (struct vu_mem_region){VMM_HIGH_MEM_BASE, vm->mem_size - vm->low_size,
						    (uintptr_t)vm->mem + vm->low_size, vm->low_size,
						    vm->mem_fd};
		nreg = 2;
	}
	/* restarting: from what the backend finished with, the used index */
	for (q = 0; q < nrings; q++) {
		struct vring_used *used = (struct vring_used *)(uintptr_t)rings[q].used_ua;

		rings[q].base = restart ? __atomic_load_n(&used->idx, __ATOMIC_ACQUIRE) : 0;
		rings[q].enable = rings[q].index / 2u < pairs;
	}
	if (vu_start(&n->fe, acked, regions, nreg, rings, nrings) != 0)
		return -1;
	n->pairs_on = pairs;
	/* let the backend look at what the guest queued meanwhile */
	for (q = 0; q < nrings; q++) {
		uint64_t one = 1;

		if (write(rings[q].kickfd, &one, sizeof(one)) < 0) {
			/* the eventfd counter cannot overflow here */
		}
	}
	return 0;
}

static void
net_stop_rings(struct vmm_virtio_net *n, const struct vu_ring *rings, unsigned int nrings)
{
	unsigned int q;
	uint16_t base;

	for (q = 0; q < nrings; q++)
		if (vu_stop_ring(&n->fe, rings[q].index, &base) != 0) {
			net_disconnect(n, true); /* closing stops the backend too */
			return;
		}
	pthread_mutex_lock(&n->vm->lock);
	n->running = false;
	pthread_mutex_unlock(&n->vm->lock);
}

/* What the driver wants, as the worker saw it last (taken under vm->lock). */
struct net_want {
	unsigned int req;
	bool run, restart;
	uint64_t acked;
	uint16_t pairs;
	struct vu_ring rings[NET_MAX_QUEUES];
	unsigned int nrings;
};

/* Enable the queue pairs below pairs, disable the others (5.1.6.5.5). */
static int
net_set_pairs(struct vmm_virtio_net *n, const struct vu_ring *rings, unsigned int nrings,
	      uint16_t pairs)
{
	unsigned int q;

	for (q = 0; q < nrings; q++) {
		bool on = rings[q].index / 2u < pairs, was = rings[q].index / 2u < n->pairs_on;

		if (on != was && vu_enable_ring(&n->fe, rings[q].index, on) != 0)
			return -1;
	}
	n->pairs_on = pairs;
	return 0;
}

/* Bring the backend in line with what the driver wants (one pass). */
static void
net_apply(struct vmm_virtio_net *n, struct net_want *w)
{
	if (n->fe.fd < 0)
		return;
	if (!w->run && n->running) {
		net_stop_rings(n, n->run_rings, n->run_nrings);
	} else if (w->run && n->running && w->pairs != n->pairs_on) {
		if (net_set_pairs(n, n->run_rings, n->run_nrings, w->pairs) != 0) {
			pthread_mutex_lock(&n->vm->lock);
			net_log(n, "setting %u queue pairs: %s", w->pairs, hv_vmm_error());
			pthread_mutex_unlock(&n->vm->lock);
			net_disconnect(n, false); /* restarted with them on reconnect */
		}
	} else if (w->run && !n->running) {
		if (net_start_rings(n, w->acked, w->rings, w->nrings, w->pairs, w->restart) == 0) {
			memcpy(n->run_rings, w->rings, sizeof(n->run_rings));
			n->run_nrings = w->nrings;
			pthread_mutex_lock(&n->vm->lock);
			n->running = true;
			if (n->req == w->req)
				n->restart = true;
			if (w->restart)
				net_log(n, "reconnected to %s, rings restored", n->vm->port_socket);
			else
				net_log(n,
					"rings started, features 0x%" PRIx64
					", %u of %u queue pairs",
					w->acked, w->pairs, (w->nrings + 1) / 2);
			pthread_mutex_unlock(&n->vm->lock);
			return;
		}
		pthread_mutex_lock(&n->vm->lock);
		net_log(n, "starting rings: %s; device needs reset", hv_vmm_error());
		if (n->req == w->req) {
			n->want_run = false;
			vmm_virtio_pci_needs_reset(&n->vp);
		}
		pthread_mutex_unlock(&n->vm->lock);
		/* the backend's state is unknown: start over */
		net_disconnect(n, false);
	}
}

/* The driver kicked the control queue: answer it, interrupt, and have the
 * pairs it asked for applied. */
static void
net_ctrl_kick(struct vmm_virtio_net *n, int kickfd)
{
	uint64_t v, one = 1;

	if (read(kickfd, &v, sizeof(v)) < 0)
		return; /* nothing new */
	pthread_mutex_lock(&n->vm->lock);
	if (n->ctrl_on && vmm_net_ctrl_process(&n->ctrl) > 0) {
		if (n->ctrl.pairs != n->want_pairs) {
			n->want_pairs = n->ctrl.pairs;
			n->req++;
		}
		if (write(n->callfd[n->ctrl_q], &one, sizeof(one)) < 0) {
			/* the counter cannot overflow: KVM or the PBA drains it */
		}
	}
	if (n->ctrl.broken && n->ctrl_on) {
		net_log(n, "control queue malformed; device needs reset");
		n->ctrl_on = false;
		vmm_virtio_pci_needs_reset(&n->vp);
	}
	pthread_mutex_unlock(&n->vm->lock);
}

/* The backend sends nothing unsolicited: readable means it hung up (or sent
 * garbage, which we treat the same way). */
static void
net_check_socket(struct vmm_virtio_net *n)
{
	char c;
	ssize_t r = recv(n->fe.fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);

	if (r >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK))
		net_disconnect(n, true);
}

static void *
net_worker(void *arg)
{
	struct vmm_virtio_net *n = arg;
	struct net_want w;

	for (;;) {
		struct pollfd p[3] = {{.fd = n->wake_fd, .events = POLLIN},
				      {.fd = -1, .events = POLLIN},
				      {.fd = -1, .events = POLLIN}};
		bool done;
		uint64_t v;
		int timeout = -1;

		if (n->fe.fd < 0) {
			if (now_ms() >= n->next_try_ms)
				net_try_connect(n);
		}
		pthread_mutex_lock(&n->vm->lock);
		if (n->quit) {
			pthread_mutex_unlock(&n->vm->lock);
			break;
		}
		w.req = n->req;
		w.run = n->want_run;
		w.restart = n->restart;
		w.acked = n->acked;
		w.pairs = n->want_pairs;
		w.nrings = n->nrings;
		memcpy(w.rings, n->rings, sizeof(w.rings));
		if (n->ctrl_on)
			p[2].fd = n->kickfd[n->ctrl_q];
		pthread_mutex_unlock(&n->vm->lock);

		net_apply(n, &w);

		pthread_mutex_lock(&n->vm->lock);
		done = n->req == w.req;
		if (done && n->vp.resetting && !n->running)
			vmm_virtio_pci_reset_done(&n->vp);
		pthread_mutex_unlock(&n->vm->lock);
		if (!done)
			continue;
		if (n->fe.fd < 0) {
			uint64_t now = now_ms();

			timeout = n->next_try_ms > now ? (int)(n->next_try_ms - now) : 0;
		}
		p[1].fd = n->fe.fd;
		if (poll(p, 3, timeout) < 0 && errno != EINTR)
			break;
		if ((p[0].revents & POLLIN) && read(n->wake_fd, &v, sizeof(v)) < 0) {
			/* drained by someone else: nothing to do */
		}
		if (n->fe.fd >= 0 && (p[1].revents & (POLLIN | POLLHUP | POLLERR)))
			net_check_socket(n);
		if (p[2].revents & POLLIN)
			net_ctrl_kick(n, p[2].fd);
	}
	return NULL;
}

int
vmm_virtio_net_init(struct hv_vm *vm)
{
	struct vmm_virtio_net *n = calloc(1, sizeof(*n));
	unsigned int q;
	int rc;

	if (n == NULL)
		return vmm_err("out of memory");
	n->vm = vm;
	n->fe.fd = -1;
	n->wake_fd = -1;
	vm->net = n;
	for (q = 0; q < NET_MAX_QUEUES; q++) {
		n->kickfd[q] = n->callfd[q] = -1;
		n->gsi[q] = -1;
	}
	n->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (n->wake_fd < 0)
		return vmm_err_errno("eventfd");
	/* the first connection is made here: no switch port, no VM */
	if (vu_connect(&n->fe, vm->port_socket) != 0)
		return -1;
	n->connected = true;
	n->backend = n->fe.features;
	if (!(n->fe.features & F(VIRTIO_F_VERSION_1)))
		return vmm_err("switch port %s does not offer VIRTIO_F_VERSION_1", vm->port_socket);
	/* as many queue pairs as the port has (hvctl port add --queues), up to ours */
	n->max_pairs = 1;
	if (n->fe.features & F(VIRTIO_NET_F_MQ))
		n->max_pairs =
			n->fe.queue_pairs < NET_MAX_PAIRS ? n->fe.queue_pairs : NET_MAX_PAIRS;
	n->nq = n->max_pairs > 1 ? 2 * n->max_pairs + 1 : 2;
	n->want_pairs = 1;
	for (q = 0; q < n->nq; q++) {
		n->kickfd[q] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		n->callfd[q] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (n->kickfd[q] < 0 || n->callfd[q] < 0)
			return vmm_err_errno("eventfd");
		n->gsi[q] = vmm_msi_route_alloc(vm);
		if (n->gsi[q] < 0)
			return -1;
	}
	n->offered = n->offer_next = net_offer(n, n->fe.features);
	if (vmm_virtio_pci_init(&n->vp, vm, NET_SLOT, 1, n->nq,
				vm->cfg.net_queue_size ? vm->cfg.net_queue_size
						       : HV_VMM_NET_QUEUE_SIZE,
				&net_ops, n) != 0)
		return -1;
	n->vp.device_features = n->offered;
	for (q = 0; q < n->nq; q++)
		if (vmm_virtio_pci_set_kickfd(&n->vp, q, n->kickfd[q]) != 0)
			return -1;
	rc = pthread_create(&n->worker, NULL, net_worker, n);
	if (rc != 0) {
		errno = rc;
		return vmm_err_errno("pthread_create");
	}
	n->worker_on = true;
	return 0;
}

void
vmm_virtio_net_free(struct hv_vm *vm)
{
	struct vmm_virtio_net *n = vm->net;
	unsigned int q;

	if (n == NULL)
		return;
	if (n->worker_on) {
		pthread_mutex_lock(&vm->lock);
		n->quit = true;
		/* a worker waiting on a stalled switch gets its answer now */
		if (n->fe.fd >= 0)
			shutdown(n->fe.fd, SHUT_RDWR);
		pthread_mutex_unlock(&vm->lock);
		wake_worker(n);
		pthread_join(n->worker, NULL);
	}
	vu_close(&n->fe);
	for (q = 0; q < NET_MAX_QUEUES; q++) {
		if (n->irqfd_on[q])
			vmm_irqfd(vm, n->callfd[q], n->gsi[q], false);
		if (n->kickfd[q] >= 0)
			close(n->kickfd[q]);
		if (n->callfd[q] >= 0)
			close(n->callfd[q]);
	}
	if (n->wake_fd >= 0)
		close(n->wake_fd);
	free(n);
	vm->net = NULL;
}

int
vmm_pci_virtio_location(struct hv_vm *vm, uint64_t *bar, uint32_t *bdf)
{
	*bar = vm->net ? vmm_pci_bar_addr(&vm->net->vp.pci, 0) : 0;
	*bdf = vm->net ? NET_SLOT << 3 : 0;
	return 0;
}

const char *
hv_vm_net_state(const struct hv_vm *vm)
{
	if (vm->net == NULL)
		return "none";
	return __atomic_load_n(&vm->net->connected, __ATOMIC_RELAXED) ? "up"
								      : "down (reconnecting)";
}

uint64_t
hv_vm_net_features(const struct hv_vm *vm)
{
	return vm->net ? vm->net->acked : 0;
}

void
hv_vm_net_mac(const struct hv_vm *vm, uint8_t mac[6])
{
	memcpy(mac, vm->cfg.mac, 6);
}

unsigned int
hv_vm_net_reconnects(const struct hv_vm *vm)
{
	return vm->net ? vm->net->reconnects : 0;
}

int
hv_vm_net_queue_stats(struct hv_vm *vm, unsigned int q, struct hv_vm_queue_stats *st)
{
	const struct vmm_virtio_queue *vq;
	const uint8_t *avail, *used;

	if (vm->net == NULL || q >= vm->net->vp.nqueues)
		return -1;
	vq = &vm->net->vp.q[q];
	memset(st, 0, sizeof(*st));
	st->size = vq->size;
	st->vector = vq->vector;
	st->enabled = vq->enabled;
	pthread_mutex_lock(&vm->lock);
	/* the rings' idx fields: guest memory at guest-chosen (maybe unaligned)
	 * addresses, so copied, and only a snapshot */
	avail = vq->enabled ? vmm_gpa_to_hva(vm, vq->avail + 2, 2) : NULL;
	used = vq->enabled ? vmm_gpa_to_hva(vm, vq->used + 2, 2) : NULL;
	if (avail)
		memcpy(&st->avail_idx, avail, 2);
	if (used)
		memcpy(&st->used_idx, used, 2);
	pthread_mutex_unlock(&vm->lock);
	return 0;
}
