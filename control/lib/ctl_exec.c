// SPDX-License-Identifier: BSD-2-Clause
/*
 * Child processes in the lws loop; see ctl_exec.h for the contract and
 * docs/edgecluster.md ("Commands") for why.
 *
 * A job's life: queued -> spawned (pipes adopted into the loop first, so a
 * spawn failure ends through the same EOF path as a normal exit) -> the
 * child is reaped (SIGCHLD on a signalfd) -> its output pipes reach EOF, or
 * LINGER_MS pass after the exit (a grandchild that kept stdout open must
 * not hold the job) -> the callback, from the loop. A pipe's wsi carries a
 * pointer to its struct stream as opaque user data; once the job is done
 * with a pipe that pointer is cleared, so late lws callbacks (a close at
 * context destroy) never reach freed memory.
 */
#include <errno.h>
#include <fcntl.h>
#include <libwebsockets.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ctl_exec.h"

extern char **environ;

#define LINGER_MS   200
#define BACKSTOP_US (1 * LWS_US_PER_SEC)
#define VHOST	    "ctl-exec"
#define PROTO	    "ctl-pipe"

enum { S_IN, S_OUT, S_ERR };

struct stream {
	struct ctl_job *j;
	struct lws *wsi; /* NULL once closed or dropped */
	int fd;		 /* ours until adopted; then lws closes it */
	char *buf;
	size_t len;
	bool trunc;
};

struct ctl_job {
	struct ctl_exec *x;
	struct ctl_job *next, *prev; /* in x->queue or x->running */
	char **argv, **envp, *cwd;
	unsigned char *in;
	size_t in_len, in_off;
	unsigned timeout_ms;
	size_t out_max;
	ctl_job_done_fn done;
	ctl_job_start_fn started;
	void *arg;

	pid_t pid;
	int status, spawn_err;
	bool running, exited, cancelled, timed_out, term_sent, finished;
	uint64_t t0_us, t1_us;
	struct stream s[3];
	lws_sorted_usec_list_t sul_kill;   /* timeout -> SIGTERM -> SIGKILL */
	lws_sorted_usec_list_t sul_linger; /* after the exit: stop waiting for EOF */
	lws_sorted_usec_list_t sul_stdin;  /* ask for POLLOUT again, from outside the callback */
};

struct list {
	struct ctl_job *head, *tail;
	unsigned n;
};

struct ctl_exec {
	struct lws_context *ctx;
	struct lws_vhost *vh;
	unsigned max_running, grace_ms;
	struct list queue, running, done; /* done: ended without running */
	int sigfd;
	struct lws *sigwsi;
	lws_sorted_usec_list_t sul_kick, sul_backstop;
};

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static void list_add(struct list *l, struct ctl_job *j)
{
	j->next = NULL;
	j->prev = l->tail;
	if (l->tail)
		l->tail->next = j;
	else
		l->head = j;
	l->tail = j;
	l->n++;
}

static void list_del(struct list *l, struct ctl_job *j)
{
	if (j->prev)
		j->prev->next = j->next;
	else
		l->head = j->next;
	if (j->next)
		j->next->prev = j->prev;
	else
		l->tail = j->prev;
	j->next = j->prev = NULL;
	l->n--;
}

char **ec_argv_dup(char *const *argv)
{
	size_t n = 0;
	char **a;

	while (argv && argv[n])
		n++;
	a = calloc(n + 1, sizeof(*a));
	for (size_t i = 0; a && i < n; i++)
		if (!(a[i] = strdup(argv[i]))) {
			ec_argv_free(a);
			return NULL;
		}
	return a;
}

void ec_argv_free(char **argv)
{
	for (size_t i = 0; argv && argv[i]; i++)
		free(argv[i]);
	free(argv);
}

/* environ with `extra` ("K=V") replacing entries of the same name. */
static char **make_env(char *const *extra)
{
	size_t n = 0, m = 0, k = 0;
	char **e;

	while (environ[n])
		n++;
	while (extra && extra[m])
		m++;
	e = calloc(n + m + 1, sizeof(*e));
	if (!e)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		size_t nl = strcspn(environ[i], "=");
		bool replaced = false;

		for (size_t j = 0; j < m && !replaced; j++)
			replaced = !strncmp(environ[i], extra[j], nl) && extra[j][nl] == '=';
		if (!replaced && !(e[k++] = strdup(environ[i])))
			goto oom;
	}
	for (size_t j = 0; j < m; j++)
		if (!(e[k++] = strdup(extra[j])))
			goto oom;
	return e;
oom:
	ec_argv_free(e);
	return NULL;
}

unsigned long long ec_proc_starttime(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long st = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	/* the command name may hold spaces and ')': fields follow the last ')' */
	p = strrchr(buf, ')');
	/* after ") ": state is field 3, starttime field 22, so skip 19 fields */
	for (int f = 0; p && f < 20; f++)
		p = strchr(p + 1, ' ');
	if (p)
		st = strtoull(p + 1, NULL, 10);
	return st;
}

/* ---- ending jobs ---- */

static void on_kick(lws_sorted_usec_list_t *sul);

/* Starting and delivering always happen from a timer: callers of
 * ctl_exec_run/ctl_job_cancel never see their callback re-enter them. */
static void kick(struct ctl_exec *x)
{
	lws_sul_schedule(x->ctx, 0, &x->sul_kick, on_kick, 0);
}

static void stream_drop(struct stream *s)
{
	if (s->wsi) {
		/* not closed synchronously: we may be inside another pipe's callback */
		lws_set_opaque_user_data(s->wsi, NULL);
		lws_set_timeout(s->wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC);
		s->wsi = NULL;
	} else if (s->fd >= 0) {
		close(s->fd);
	}
	s->fd = -1;
}

static void job_free(struct ctl_job *j)
{
	for (int i = 0; i < 3; i++) {
		stream_drop(&j->s[i]);
		free(j->s[i].buf);
	}
	lws_sul_cancel(&j->sul_kill);
	lws_sul_cancel(&j->sul_linger);
	lws_sul_cancel(&j->sul_stdin);
	ec_argv_free(j->argv);
	ec_argv_free(j->envp);
	free(j->cwd);
	free(j->in);
	free(j);
}

static void deliver(struct ctl_job *j)
{
	struct ctl_job_result r = {0};
	static const char empty[] = "";

	if (j->spawn_err) {
		r.end = CTL_JOB_SPAWN_FAILED;
		r.code = j->spawn_err;
	} else if (j->cancelled) {
		r.end = CTL_JOB_CANCELLED;
	} else if (j->timed_out) {
		r.end = CTL_JOB_TIMEOUT;
		r.code = (int)j->timeout_ms;
	} else if (WIFEXITED(j->status)) {
		r.end = CTL_JOB_EXITED;
		r.code = WEXITSTATUS(j->status);
	} else {
		r.end = CTL_JOB_SIGNALED;
		r.code = WIFSIGNALED(j->status) ? WTERMSIG(j->status) : 0;
	}
	r.out = j->s[S_OUT].buf ? j->s[S_OUT].buf : empty;
	r.out_len = j->s[S_OUT].len;
	r.out_truncated = j->s[S_OUT].trunc;
	r.err = j->s[S_ERR].buf ? j->s[S_ERR].buf : empty;
	r.err_len = j->s[S_ERR].len;
	r.err_truncated = j->s[S_ERR].trunc;
	if (j->t0_us)
		r.ms = (unsigned)(((j->t1_us ? j->t1_us : now_us()) - j->t0_us) / 1000);
	j->done(j->arg, &r);
}

/* Done once reaped and its output pipes are closed (or dropped). */
static void job_check_done(struct ctl_job *j)
{
	struct ctl_exec *x = j->x;

	if (j->finished || !j->exited || j->s[S_OUT].wsi || j->s[S_ERR].wsi)
		return;
	j->finished = true;
	list_del(&x->running, j);
	stream_drop(&j->s[S_IN]); /* a child that did not read all of its stdin */
	lws_sul_cancel(&j->sul_kill);
	lws_sul_cancel(&j->sul_linger);
	deliver(j);
	job_free(j);
	kick(x); /* a slot is free */
}

static void on_linger(lws_sorted_usec_list_t *sul)
{
	struct ctl_job *j = lws_container_of(sul, struct ctl_job, sul_linger);

	stream_drop(&j->s[S_OUT]);
	stream_drop(&j->s[S_ERR]);
	job_check_done(j);
}

static void reap(struct ctl_exec *x)
{
	struct ctl_job *j, *next;

	for (j = x->running.head; j; j = next) {
		next = j->next;
		if (j->exited || j->pid <= 0 || waitpid(j->pid, &j->status, WNOHANG) != j->pid)
			continue;
		j->exited = true;
		j->t1_us = now_us();
		lws_sul_cancel(&j->sul_kill);
		if (j->s[S_OUT].wsi || j->s[S_ERR].wsi)
			lws_sul_schedule(x->ctx, 0, &j->sul_linger, on_linger,
					 LINGER_MS * LWS_US_PER_MS);
		job_check_done(j);
	}
}

static void on_backstop(lws_sorted_usec_list_t *sul)
{
	struct ctl_exec *x = lws_container_of(sul, struct ctl_exec, sul_backstop);

	reap(x);
	if (x->running.n)
		lws_sul_schedule(x->ctx, 0, &x->sul_backstop, on_backstop, BACKSTOP_US);
}

/* Timeout or cancel: SIGTERM to the group now, SIGKILL after the grace.
 * Only while the leader is unreaped: then the group id cannot be reused. */
static void on_kill(lws_sorted_usec_list_t *sul)
{
	struct ctl_job *j = lws_container_of(sul, struct ctl_job, sul_kill);

	if (j->exited)
		return;
	if (!j->cancelled)
		j->timed_out = true;
	if (!j->term_sent) {
		j->term_sent = true;
		kill(-j->pid, SIGTERM);
		lws_sul_schedule(j->x->ctx, 0, &j->sul_kill, on_kill,
				 (lws_usec_t)j->x->grace_ms * LWS_US_PER_MS);
	} else {
		kill(-j->pid, SIGKILL);
	}
}

/* ---- the pipes, as raw files in the loop ---- */

static int pipe_read(struct stream *s)
{
	char buf[16384];
	ssize_t n;

	for (;;) {
		n = read(s->fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == EAGAIN ? 0 : -1;
		if (n == 0)
			return -1; /* EOF */
		size_t room = s->j->out_max - s->len, take = (size_t)n < room ? (size_t)n : room;

		if (take) {
			char *nb = realloc(s->buf, s->len + take + 1);

			if (!nb)
				return -1;
			s->buf = nb;
			memcpy(s->buf + s->len, buf, take);
			s->len += take;
			s->buf[s->len] = 0;
		}
		/* keep reading past the cap: a child blocked on a full pipe never exits */
		s->trunc |= take < (size_t)n;
	}
}

static void on_stdin(lws_sorted_usec_list_t *sul)
{
	struct ctl_job *j = lws_container_of(sul, struct ctl_job, sul_stdin);

	if (j->s[S_IN].wsi)
		lws_callback_on_writable(j->s[S_IN].wsi);
}

static int pipe_write(struct stream *s)
{
	struct ctl_job *j = s->j;

	while (j->in_off < j->in_len) {
		ssize_t n = write(s->fd, j->in + j->in_off, j->in_len - j->in_off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			/* lws 4.1's raw-file role clears POLLOUT after this callback
			 * returns, so asking for it here would be lost: ask from a timer */
			lws_sul_schedule(j->x->ctx, 0, &j->sul_stdin, on_stdin, 1);
			return 0;
		}
		if (n < 0)
			return -1; /* EPIPE: the child closed its stdin */
		j->in_off += (size_t)n;
	}
	return -1; /* all written: closing the pipe is the child's EOF */
}

static int cb_pipe(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
		   size_t len)
{
	struct stream *s = lws_get_opaque_user_data(wsi);
	int rc = 0;

	switch (reason) {
	case LWS_CALLBACK_RAW_RX_FILE:
		if (!s)
			return -1;
		rc = pipe_read(s);
		break;
	case LWS_CALLBACK_RAW_WRITEABLE_FILE:
		if (!s)
			return -1;
		rc = pipe_write(s);
		break;
	case LWS_CALLBACK_RAW_CLOSE_FILE:
		if (!s)
			return 0;
		s->wsi = NULL; /* lws closes the fd */
		s->fd = -1;
		lws_set_opaque_user_data(wsi, NULL);
		job_check_done(s->j);
		return 0;
	default:
		return lws_callback_http_dummy(wsi, reason, user, in, len);
	}
	if (rc) {
		/* closing: detach first so CLOSE_FILE does not run the check twice */
		s->wsi = NULL;
		s->fd = -1;
		lws_set_opaque_user_data(wsi, NULL);
		job_check_done(s->j);
		return -1;
	}
	return 0;
}

/* SIGCHLD: reap whatever exited. */
static int cb_sigchld(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
		      size_t len)
{
	struct ctl_exec *x = lws_get_opaque_user_data(wsi);
	struct signalfd_siginfo si;

	if (reason == LWS_CALLBACK_RAW_RX_FILE && x) {
		while (read(lws_get_socket_fd(wsi), &si, sizeof(si)) == (ssize_t)sizeof(si))
			;
		reap(x);
		return 0;
	}
	if (reason == LWS_CALLBACK_RAW_CLOSE_FILE && x) {
		x->sigwsi = NULL;
		x->sigfd = -1;
		return 0;
	}
	return lws_callback_http_dummy(wsi, reason, user, in, len);
}

static const struct lws_protocols protocols[] = {
    {PROTO, cb_pipe, 0, 0, 0, NULL, 0},
    {"ctl-sigchld", cb_sigchld, 0, 0, 0, NULL, 0},
    {NULL, NULL, 0, 0, 0, NULL, 0},
};

static struct lws *adopt(struct ctl_exec *x, int fd, const char *proto, void *opaque)
{
	lws_adopt_desc_t ad;

	memset(&ad, 0, sizeof(ad));
	ad.vh = x->vh;
	ad.type = LWS_ADOPT_RAW_FILE_DESC;
	ad.fd.filefd = fd;
	ad.vh_prot_name = proto;
	ad.opaque = opaque;
	return lws_adopt_descriptor_vhost_via_info(&ad);
}

/* ---- spawning ---- */

static int spawn(struct ctl_job *j)
{
	int p[3][2] = {{-1, -1}, {-1, -1}, {-1, -1}};
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	int rc = 0;

	for (int i = 0; i < 3; i++) {
		if (i == S_IN && !j->in)
			continue;
		if (pipe2(p[i], O_CLOEXEC)) {
			rc = errno;
			goto out;
		}
		/* our end non-blocking: the loop must never wait on a child */
		int ours = i == S_IN ? p[i][1] : p[i][0];

		fcntl(ours, F_SETFL, fcntl(ours, F_GETFL) | O_NONBLOCK);
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&at);
	if (j->in)
		posix_spawn_file_actions_adddup2(&fa, p[S_IN][0], 0);
	else
		posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, p[S_OUT][1], 1);
	posix_spawn_file_actions_adddup2(&fa, p[S_ERR][1], 2);
	/* the daemon's sockets, database and signalfds are not the child's business */
	posix_spawn_file_actions_addclosefrom_np(&fa, 3);
	if (j->cwd)
		posix_spawn_file_actions_addchdir_np(&fa, j->cwd);
	ec_spawnattr_child(&at);
	rc = posix_spawnp(&j->pid, j->argv[0], &fa, &at, j->argv, j->envp);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
out:
	for (int i = 0; i < 3; i++) {
		int child = i == S_IN ? p[i][0] : p[i][1], ours = i == S_IN ? p[i][1] : p[i][0];

		if (child >= 0)
			close(child); /* the child has its copy; our EOF comes when it is done */
		j->s[i].fd = ours;
	}
	return rc;
}

static void start_job(struct ctl_exec *x, struct ctl_job *j)
{
	int err;

	list_add(&x->running, j);
	j->running = true;
	j->t0_us = now_us();
	err = spawn(j);
	for (int i = 0; i < 3; i++) {
		struct stream *s = &j->s[i];

		if (s->fd < 0)
			continue;
		/* if the spawn failed, the output pipes are at EOF already: the job
		 * ends through the usual close path, from the loop */
		s->wsi = adopt(x, s->fd, PROTO, s);
		if (!s->wsi) {
			close(s->fd);
			s->fd = -1;
			if (!err)
				err = EMFILE;
		}
	}
	if (err) {
		if (j->pid > 0) {
			kill(-j->pid, SIGKILL);
			waitpid(j->pid, &j->status, 0);
		}
		j->spawn_err = err;
		j->exited = true;
		j->pid = 0;
		stream_drop(&j->s[S_IN]);
		/* output pipes not adopted: nothing will close them for us */
		if (!j->s[S_OUT].wsi || !j->s[S_ERR].wsi) {
			stream_drop(&j->s[S_OUT]);
			stream_drop(&j->s[S_ERR]);
		}
		lws_sul_schedule(x->ctx, 0, &j->sul_linger, on_linger, LINGER_MS * LWS_US_PER_MS);
		return;
	}
	if (j->s[S_IN].wsi)
		lws_callback_on_writable(j->s[S_IN].wsi);
	if (j->timeout_ms)
		lws_sul_schedule(x->ctx, 0, &j->sul_kill, on_kill,
				 (lws_usec_t)j->timeout_ms * LWS_US_PER_MS);
	if (j->started)
		j->started(j->arg, j->pid, ec_proc_starttime(j->pid));
	lws_sul_schedule(x->ctx, 0, &x->sul_backstop, on_backstop, BACKSTOP_US);
}

/* Deliver jobs that ended without running, then fill the free slots. */
static void on_kick(lws_sorted_usec_list_t *sul)
{
	struct ctl_exec *x = lws_container_of(sul, struct ctl_exec, sul_kick);
	struct ctl_job *j;

	while ((j = x->done.head)) {
		list_del(&x->done, j);
		deliver(j);
		job_free(j);
	}
	while (x->running.n < x->max_running && (j = x->queue.head)) {
		list_del(&x->queue, j);
		start_job(x, j);
	}
}

/* ---- the exec's public side ---- */

struct ctl_exec *ctl_exec_new(struct lws_context *ctx, unsigned max_running, unsigned grace_ms)
{
	struct lws_context_creation_info info;
	struct ctl_exec *x = calloc(1, sizeof(*x));
	lws_adopt_desc_t ad;
	sigset_t set;

	if (!x)
		return NULL;
	x->ctx = ctx;
	x->max_running = max_running ? max_running : 1;
	x->grace_ms = grace_ms;
	/* a vhost of our own that listens nowhere: the pipes' protocol lives here,
	 * so the HTTP vhost's protocol list needs nothing of ours */
	memset(&info, 0, sizeof(info));
	info.port = CONTEXT_PORT_NO_LISTEN_SERVER;
	info.protocols = protocols;
	info.vhost_name = VHOST;
	x->vh = lws_create_vhost(ctx, &info);
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigprocmask(SIG_BLOCK, &set, NULL);
	x->sigfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	if (!x->vh || x->sigfd < 0) {
		if (x->sigfd >= 0)
			close(x->sigfd);
		free(x);
		return NULL;
	}
	memset(&ad, 0, sizeof(ad));
	ad.vh = x->vh;
	ad.type = LWS_ADOPT_RAW_FILE_DESC;
	ad.fd.filefd = x->sigfd;
	ad.vh_prot_name = "ctl-sigchld";
	ad.opaque = x;
	x->sigwsi = lws_adopt_descriptor_vhost_via_info(&ad);
	if (!x->sigwsi) {
		close(x->sigfd);
		free(x);
		return NULL;
	}
	return x;
}

static void free_list(struct list *l)
{
	struct ctl_job *j;

	while ((j = l->head)) {
		list_del(l, j);
		job_free(j);
	}
}

void ctl_exec_free(struct ctl_exec *x)
{
	uint64_t until;
	struct ctl_job *j;
	bool left;

	if (!x)
		return;
	lws_sul_cancel(&x->sul_kick);
	lws_sul_cancel(&x->sul_backstop);
	for (j = x->running.head; j; j = j->next)
		if (!j->exited && j->pid > 0)
			kill(-j->pid, SIGTERM);
	/* blocking, but only at shutdown and for at most the grace */
	until = now_us() + (uint64_t)x->grace_ms * 1000;
	do {
		left = false;
		for (j = x->running.head; j; j = j->next) {
			if (!j->exited && j->pid > 0 &&
			    waitpid(j->pid, &j->status, WNOHANG) == j->pid)
				j->exited = true;
			left |= !j->exited && j->pid > 0;
		}
		if (left)
			usleep(10000);
	} while (left && now_us() < until);
	for (j = x->running.head; j; j = j->next)
		if (!j->exited && j->pid > 0) {
			kill(-j->pid, SIGKILL);
			waitpid(j->pid, &j->status, 0);
		}
	free_list(&x->running);
	free_list(&x->queue);
	free_list(&x->done);
	if (x->sigwsi)
		lws_set_opaque_user_data(x->sigwsi, NULL);
	lws_vhost_destroy(x->vh); /* closes the signalfd and any pipe left */
	free(x);
}

struct ctl_job *ctl_exec_run(struct ctl_exec *x, const struct ctl_job_spec *sp)
{
	struct ctl_job *j = calloc(1, sizeof(*j));

	if (!j)
		return NULL;
	j->x = x;
	for (int i = 0; i < 3; i++) {
		j->s[i].j = j;
		j->s[i].fd = -1;
	}
	j->argv = ec_argv_dup(sp->argv);
	j->envp = make_env(sp->env);
	j->cwd = sp->cwd ? strdup(sp->cwd) : NULL;
	if (sp->in) {
		/* one byte more so that an empty stdin still gets a pipe (and EOF) */
		j->in = malloc(sp->in_len + 1);
		if (j->in)
			memcpy(j->in, sp->in, sp->in_len);
		j->in_len = sp->in_len;
	}
	j->timeout_ms = sp->timeout_ms;
	j->out_max = sp->out_max ? sp->out_max : EC_OUT_MAX_DEFAULT;
	j->done = sp->done;
	j->started = sp->started;
	j->arg = sp->arg;
	if (!j->argv || !j->argv[0] || !j->envp || (sp->cwd && !j->cwd) || (sp->in && !j->in)) {
		job_free(j);
		return NULL;
	}
	list_add(&x->queue, j);
	kick(x);
	return j;
}

void ctl_job_cancel(struct ctl_job *j)
{
	if (!j || j->cancelled || j->finished)
		return;
	j->cancelled = true;
	if (!j->running) {
		list_del(&j->x->queue, j);
		list_add(&j->x->done, j);
		kick(j->x);
		return;
	}
	if (j->exited || j->term_sent)
		return; /* already on its way out */
	lws_sul_cancel(&j->sul_kill);
	on_kill(&j->sul_kill);
}

unsigned ctl_exec_running(const struct ctl_exec *x)
{
	return x->running.n;
}

unsigned ctl_exec_queued(const struct ctl_exec *x)
{
	return x->queue.n;
}

void ec_spawnattr_child(posix_spawnattr_t *at)
{
	sigset_t none, all;

	/* the daemon blocks SIGCHLD/SIGTERM/SIGINT (signalfds) and ignores SIGPIPE:
	 * neither may leak into commands (a blocked SIGTERM would defeat timeouts) */
	sigemptyset(&none);
	sigfillset(&all);
	sigdelset(&all, SIGKILL);
	sigdelset(&all, SIGSTOP);
	posix_spawnattr_setsigmask(at, &none);
	posix_spawnattr_setsigdefault(at, &all);
	/* its own process group: a timeout stops the command and what it started */
	posix_spawnattr_setpgroup(at, 0);
	posix_spawnattr_setflags(at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF |
					 POSIX_SPAWN_SETPGROUP);
}
