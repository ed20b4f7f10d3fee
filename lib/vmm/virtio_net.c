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
 * When the backend goes away the VMM reconnects and restarts the rings with
 * the features the guest negotiated, from the used index in guest memory.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "vhost_user_frontend.h"
#include "virtio_pci.h"
#include "vmm_internal.h"

#define NET_QUEUES 2
#define NET_QUEUE_SIZE 1024
#define NET_SLOT 1
#define RECONNECT_MS 200

#define F(n) (1ull << (n))
/* virtio-net features */
#define VNET_F_CSUM 0
#define VNET_F_GUEST_CSUM 1
#define VNET_F_MTU 3
#define VNET_F_MAC 5
#define VNET_F_GUEST_TSO4 7
#define VNET_F_GUEST_TSO6 8
#define VNET_F_GUEST_ECN 9
#define VNET_F_HOST_TSO4 11
#define VNET_F_HOST_TSO6 12
#define VNET_F_HOST_ECN 13
#define VNET_F_MRG_RXBUF 15
#define VNET_F_STATUS 16
#define VRING_F_INDIRECT 28
#define VRING_F_EVENT_IDX 29
#define VIRTIO_F_VERSION_1 32

/* What the backend may offer that we pass on to the guest. */
#define NET_RELAYED                                                                    \
	(F(VNET_F_CSUM) | F(VNET_F_GUEST_CSUM) | F(VNET_F_GUEST_TSO4) | F(VNET_F_GUEST_TSO6) | \
	 F(VNET_F_GUEST_ECN) | F(VNET_F_HOST_TSO4) | F(VNET_F_HOST_TSO6) |                 \
	 F(VNET_F_HOST_ECN) | F(VNET_F_MRG_RXBUF) | F(VRING_F_INDIRECT) |                  \
	 F(VRING_F_EVENT_IDX) | F(VIRTIO_F_VERSION_1))
/* What the VMM itself implements (device config space). */
#define NET_OWN (F(VNET_F_MAC) | F(VNET_F_STATUS))

struct vmm_virtio_net {
	struct hv_vm *vm;
	struct vmm_virtio_pci vp;
	struct vu_frontend fe;
	bool connected;
	bool running;         /* rings started on the backend */
	bool failed;          /* the backend refused us: no retry until reset */
	uint64_t offered;     /* to the guest */
	uint64_t acked;       /* to the backend */
	int kickfd[NET_QUEUES];
	int callfd[NET_QUEUES];
	int gsi[NET_QUEUES];
	bool irqfd_on[NET_QUEUES];
	uint64_t next_try_ms;
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

	for (q = 0; q < NET_QUEUES; q++) {
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

	for (q = 0; q < NET_QUEUES; q++) {
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
	uint8_t cfg[12] = {0};
	uint16_t status = n->connected ? 1 : 0, pairs = 1, mtu = n->vm->cfg.mtu;

	memcpy(cfg, n->vm->cfg.mac, 6);
	memcpy(cfg + 6, &status, 2);
	memcpy(cfg + 8, &pairs, 2);
	memcpy(cfg + 10, &mtu, 2);
	vmm_virtio_config_copy(cfg, sizeof(cfg), off, data, len);
}

/* ---- backend ---- */

static void net_socket_event(void *opaque, int fd);

static void
net_disconnected(struct vmm_virtio_net *n)
{
	hv_vm_del_fd(n->vm, n->fe.fd);
	vu_close(&n->fe);
	n->connected = false;
	n->running = false;
	n->next_try_ms = now_ms() + RECONNECT_MS;
	net_log(n, "switch port disconnected; reconnecting to %s", n->vm->port_socket);
}

static int
net_connect(struct vmm_virtio_net *n)
{
	if (vu_connect(&n->fe, n->vm->port_socket) != 0)
		return -1;
	if (hv_vm_add_fd(n->vm, n->fe.fd, net_socket_event, n) != 0) {
		vu_close(&n->fe);
		return -1;
	}
	n->connected = true;
	return 0;
}

/* Start the rings on the backend, from base indexes in guest memory when
 * restarting (the used index: what the backend finished with). */
static int
net_start_rings(struct vmm_virtio_net *n, bool restart)
{
	struct vu_mem_region regions[2];
	struct vu_ring rings[NET_QUEUES];
	struct hv_vm *vm = n->vm;
	unsigned int q, nreg = 1;

	regions[0] = (struct vu_mem_region){0, vm->low_size, (uintptr_t)vm->mem, 0, vm->mem_fd};
	if (vm->mem_size > vm->low_size) {
		regions[1] = (struct vu_mem_region){VMM_HIGH_MEM_BASE, vm->mem_size - vm->low_size,
						    (uintptr_t)vm->mem + vm->low_size,
						    vm->low_size, vm->mem_fd};
		nreg = 2;
	}
	for (q = 0; q < NET_QUEUES; q++) {
		struct vmm_virtio_queue *vq = &n->vp.q[q];
		void *desc = vmm_gpa_to_hva(vm, vq->desc, 16ull * vq->size);
		void *avail = vmm_gpa_to_hva(vm, vq->avail, 6 + 2ull * vq->size);
		uint16_t *used = vmm_gpa_to_hva(vm, vq->used, 6 + 8ull * vq->size);

		if (!vq->enabled || desc == NULL || avail == NULL || used == NULL)
			return vmm_err("queue %u not enabled or outside guest memory", q);
		rings[q] = (struct vu_ring){
			.num = vq->size,
			.base = restart ? __atomic_load_n(&used[1], __ATOMIC_ACQUIRE) : 0,
			.desc_ua = (uintptr_t)desc,
			.avail_ua = (uintptr_t)avail,
			.used_ua = (uintptr_t)used,
			.kickfd = n->kickfd[q],
			.callfd = n->callfd[q],
		};
	}
	if (vu_start(&n->fe, n->acked, regions, nreg, rings, NET_QUEUES) != 0)
		return -1;
	n->running = true;
	/* let the backend look at what the guest queued meanwhile */
	for (q = 0; q < NET_QUEUES && restart; q++) {
		uint64_t one = 1;

		if (write(n->kickfd[q], &one, sizeof(one)) < 0) {
			/* the eventfd counter cannot overflow here */
		}
	}
	return 0;
}

static bool
net_driver_ok(void *opaque)
{
	struct vmm_virtio_net *n = opaque;

	n->acked = n->vp.driver_features & n->fe.features;
	n->failed = false;
	if (!n->connected)
		return true; /* started on reconnect */
	if (net_start_rings(n, false) != 0) {
		net_log(n, "starting rings: %s", hv_vmm_error());
		n->failed = true;
		return false;
	}
	net_log(n, "rings started, features 0x%" PRIx64, n->acked);
	return true;
}

static void
net_reset(void *opaque)
{
	struct vmm_virtio_net *n = opaque;
	unsigned int q;
	uint16_t base;

	if (n->running) {
		for (q = 0; q < NET_QUEUES; q++)
			if (vu_stop_ring(&n->fe, q, &base) != 0)
				break;
		n->running = false;
	}
	n->acked = 0;
}

static const struct vmm_virtio_ops net_ops = {
	.config_read = net_config_read,
	.driver_ok = net_driver_ok,
	.reset = net_reset,
	.vectors_changed = net_vectors_changed,
	.vector_pending = net_vector_pending,
};

/* The backend sends nothing unsolicited: readable means it hung up (or sent
 * garbage, which we treat the same way). Replies are read under the lock. */
static void
net_socket_event(void *opaque, int fd)
{
	struct vmm_virtio_net *n = opaque;
	char c;
	ssize_t r;

	pthread_mutex_lock(&n->vm->lock);
	if (n->connected && n->fe.fd == fd) {
		r = recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
		if (r >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK))
			net_disconnected(n);
	}
	pthread_mutex_unlock(&n->vm->lock);
}

void
vmm_virtio_net_tick(struct hv_vm *vm)
{
	struct vmm_virtio_net *n = vm->net;

	pthread_mutex_lock(&vm->lock);
	if (!n->connected && now_ms() >= n->next_try_ms) {
		n->next_try_ms = now_ms() + RECONNECT_MS;
		if (net_connect(n) == 0) {
			bool live = n->vp.status & VIRTIO_STATUS_DRIVER_OK;

			if (live && (n->acked & ~n->fe.features)) {
				net_log(n, "switch port no longer offers features 0x%" PRIx64,
					n->acked & ~n->fe.features);
				net_disconnected(n);
			} else if (live && !n->failed && net_start_rings(n, true) != 0) {
				net_log(n, "restoring rings: %s", hv_vmm_error());
				net_disconnected(n);
			} else {
				n->reconnects++;
				net_log(n, "reconnected to %s%s", vm->port_socket,
					live ? ", rings restored" : "");
			}
		}
	}
	pthread_mutex_unlock(&vm->lock);
}

int
vmm_virtio_net_init(struct hv_vm *vm)
{
	struct vmm_virtio_net *n = calloc(1, sizeof(*n));
	unsigned int q;

	if (n == NULL)
		return vmm_err("out of memory");
	n->vm = vm;
	n->fe.fd = -1;
	vm->net = n;
	for (q = 0; q < NET_QUEUES; q++) {
		n->kickfd[q] = n->callfd[q] = -1;
		n->gsi[q] = -1;
	}
	for (q = 0; q < NET_QUEUES; q++) {
		n->kickfd[q] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		n->callfd[q] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (n->kickfd[q] < 0 || n->callfd[q] < 0)
			return vmm_err_errno("eventfd");
		n->gsi[q] = vmm_msi_route_alloc(vm);
		if (n->gsi[q] < 0)
			return -1;
	}
	if (net_connect(n) != 0)
		return -1;
	if (!(n->fe.features & F(VIRTIO_F_VERSION_1)))
		return vmm_err("switch port %s does not offer VIRTIO_F_VERSION_1", vm->port_socket);
	n->offered = (n->fe.features & NET_RELAYED) | NET_OWN | (vm->cfg.mtu ? F(VNET_F_MTU) : 0);
	if (vmm_virtio_pci_init(&n->vp, vm, NET_SLOT, 1, NET_QUEUES, NET_QUEUE_SIZE, &net_ops, n) !=
	    0)
		return -1;
	n->vp.device_features = n->offered;
	for (q = 0; q < NET_QUEUES; q++)
		if (vmm_virtio_pci_set_kickfd(&n->vp, q, n->kickfd[q]) != 0)
			return -1;
	return 0;
}

void
vmm_virtio_net_free(struct hv_vm *vm)
{
	struct vmm_virtio_net *n = vm->net;
	unsigned int q;

	if (n == NULL)
		return;
	if (n->fe.fd >= 0)
		hv_vm_del_fd(vm, n->fe.fd);
	vu_close(&n->fe);
	for (q = 0; q < NET_QUEUES; q++) {
		if (n->irqfd_on[q])
			vmm_irqfd(vm, n->callfd[q], n->gsi[q], false);
		if (n->kickfd[q] >= 0)
			close(n->kickfd[q]);
		if (n->callfd[q] >= 0)
			close(n->callfd[q]);
	}
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
	return vm->net->connected ? "up" : "down (reconnecting)";
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

	if (vm->net == NULL || q >= NET_QUEUES)
		return -1;
	vq = &vm->net->vp.q[q];
	memset(st, 0, sizeof(*st));
	st->size = vq->size;
	st->vector = vq->vector;
	st->enabled = vq->enabled;
	pthread_mutex_lock(&vm->lock);
	/* the rings' idx fields; guest memory, so only a snapshot */
	avail = vq->enabled ? vmm_gpa_to_hva(vm, vq->avail + 2, 2) : NULL;
	used = vq->enabled ? vmm_gpa_to_hva(vm, vq->used + 2, 2) : NULL;
	if (avail)
		st->avail_idx = __atomic_load_n((const uint16_t *)avail, __ATOMIC_RELAXED);
	if (used)
		st->used_idx = __atomic_load_n((const uint16_t *)used, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&vm->lock);
	return 0;
}
