// SPDX-License-Identifier: BSD-2-Clause
/*
 * fornax-echo: the example application of the session service. An HTTP
 * server that answers every request with the data of the session it
 * holds (503 while it holds none), and tells nodeagentd when it is ready
 * for a session, when clients are on it and when it closed it
 * (proto/session-service.md).
 *   fornax-echo [--port N]        (default 8080; FORNAX_SESSION_SOCKET from the node)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "svc_lines.h"

#define MAX_CLIENTS 32

struct app {
	char session[256]; /* "" while none */
	char data[16 * 1024 + 1];
	size_t data_len;
	int clients;
	struct svc_conn svc;
};

static void on_svc(struct svc_conn *c, json_t *m, void *arg)
{
	struct app *a = arg;
	const char *op = json_string_value(json_object_get(m, "op"));
	const char *id = json_string_value(json_object_get(m, "session"));

	if (!op)
		return;
	if (!strcmp(op, "open") && id) {
		const char *d = json_string_value(json_object_get(m, "data"));

		if (b64_decode(d ? d : "", a->data, sizeof(a->data), &a->data_len)) {
			svc_send(c, json_pack("{s:s,s:s,s:s}", "op", "closed", "session", id,
					      "reason", "bad sessionData"));
			return;
		}
		snprintf(a->session, sizeof(a->session), "%s", id);
		svc_send(c, json_pack("{s:s,s:s}", "op", "ready", "session", id));
	} else if (!strcmp(op, "close") && id) {
		/* nothing to drain here: closed at once, whatever the grace */
		if (!strcmp(a->session, id))
			a->session[0] = 0;
		svc_send(c, json_pack("{s:s,s:s}", "op", "closed", "session", id));
	} else if (!strcmp(op, "ping")) {
		svc_send(c,
			 json_pack("{s:s,s:O?}", "op", "pong", "seq", json_object_get(m, "seq")));
	}
}

static void inuse(struct app *a)
{
	if (a->session[0])
		svc_send(&a->svc, json_pack("{s:s,s:s,s:i}", "op", "inuse", "session", a->session,
					    "clients", a->clients));
}

static void answer(struct app *a, int fd)
{
	char req[4096], head[256];
	ssize_t n = read(fd, req, sizeof(req) - 1);
	int code = a->session[0] ? 200 : 503;
	const char *body = a->session[0] ? a->data : "no session\n";
	size_t blen = a->session[0] ? a->data_len : strlen(body);
	int hl;

	if (n <= 0)
		return;
	hl = snprintf(head, sizeof(head),
		      "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\nContent-Length: %zu\r\n"
		      "Connection: close\r\n\r\n",
		      code, code == 200 ? "OK" : "Service Unavailable", blen);
	if (write(fd, head, (size_t)hl) < 0 || write(fd, body, blen) < 0)
		return;
}

int main(int argc, char **argv)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	const char *sock = getenv("FORNAX_SESSION_SOCKET");
	struct app *a = calloc(1, sizeof(*a));
	int port = 8080, lfd, sfd = -1, one = 1;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--port") && i + 1 < argc) {
			port = atoi(argv[++i]);
		} else {
			fprintf(stderr, "usage: fornax-echo [--port N]\n");
			return 2;
		}
	}
	if (!a || port < 1 || port > 65535) {
		fprintf(stderr, "fornax-echo: bad port %d\n", port);
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	a->svc.fd = -1;
	if (sock && (sfd = svc_listen(sock)) < 0) {
		fprintf(stderr, "fornax-echo: session socket %s: %s\n", sock, strerror(errno));
		return 1;
	}
	sa.sin_port = htons((uint16_t)port);
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(lfd, 64)) {
		fprintf(stderr, "fornax-echo: port %d: %s\n", port, strerror(errno));
		return 1;
	}
	fprintf(stderr, "fornax-echo: port %d, session service %s\n", port, sock ? sock : "none");
	for (;;) {
		struct pollfd p[3] = {{lfd, POLLIN, 0}, {sfd, POLLIN, 0}, {a->svc.fd, POLLIN, 0}};

		if (poll(p, 3, -1) < 0 && errno != EINTR)
			return 1;
		if (p[0].revents & POLLIN) {
			int c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

			if (c >= 0) {
				a->clients++;
				inuse(a);
				answer(a, c);
				close(c);
				a->clients--;
				inuse(a);
			}
		}
		if (p[1].revents & POLLIN) {
			int c = accept4(sfd, NULL, NULL, SOCK_CLOEXEC);

			/* the node's agent again (it restarted): the newest connection is it */
			if (c >= 0) {
				if (a->svc.fd >= 0)
					close(a->svc.fd);
				a->svc.fd = c;
				a->svc.len = 0;
			}
		}
		if (p[2].revents & (POLLIN | POLLHUP | POLLERR)) {
			if (svc_read(&a->svc, on_svc, a)) {
				close(a->svc.fd);
				a->svc.fd = -1;
			}
		}
	}
}
