/* SPDX-License-Identifier: BSD-3-Clause */
#include "hv_test_net.h"

#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <sys/socket.h>
#include <unistd.h>

int
hv_test_raw_open(const char *ifname)
{
	struct sockaddr_ll sa = {.sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL)};
	int fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ALL));

	sa.sll_ifindex = (int)if_nametoindex(ifname);
	if (fd < 0 || sa.sll_ifindex == 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}
