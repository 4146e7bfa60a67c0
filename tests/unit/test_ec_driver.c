// SPDX-License-Identifier: BSD-2-Clause
/* edgeclusterd's command runner (exec.c) in a real lws loop, and the
 * drivers' pieces (driver.c): output and exit codes, no shell, stdin larger
 * than a pipe buffer, the output cap, timeouts (also when SIGTERM is
 * ignored, and for the whole process group), spawn failures, the
 * concurrency cap and its queue, cancel, a grandchild that keeps stdout
 * open, a clean signal state and no inherited fds in children, no fd left
 * behind; kubectl argv per distro, the content file, the work dir's
 * removal (a command too) without following symlinks. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libwebsockets.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "unit.h"
#include "driver.h"

static struct lws_context *ctx;
static struct ctl_exec *x;

struct res {
	bool done;
	enum ctl_job_end end;
	int code;
	char out[1024], err[256], desc[300];
	size_t out_len;
	bool trunc;
	unsigned ms;
	pid_t pid;
};

static void on_done(void *arg, const struct ctl_job_result *r)
{
	struct res *s = arg;

	s->done = true;
	s->end = r->end;
	s->code = r->code;
	s->out_len = r->out_len;
	s->trunc = r->out_truncated;
	s->ms = r->ms;
	snprintf(s->out, sizeof(s->out), "%s", r->out);
	snprintf(s->err, sizeof(s->err), "%s", r->err);
	ctl_job_describe(r, s->desc, sizeof(s->desc));
}

static void on_start(void *arg, pid_t pid, unsigned long long st)
{
	struct res *s = arg;

	s->pid = st ? pid : -1;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Run the loop until every res is done (or 10 s pass). */
static void wait_all(struct res *r, int n)
{
	double end = now() + 10;

	for (;;) {
		int left = 0;

		for (int i = 0; i < n; i++)
			left += !r[i].done;
		if (!left || now() > end)
			return;
		lws_service(ctx, 0);
	}
}

static struct ctl_job *go(struct res *r, char *const *argv, const char *in, size_t in_len,
			  unsigned timeout_ms, size_t out_max)
{
	struct ctl_job_spec js = {.argv = argv,
				  .in = in,
				  .in_len = in_len,
				  .timeout_ms = timeout_ms,
				  .out_max = out_max,
				  .done = on_done,
				  .started = on_start,
				  .arg = r};

	memset(r, 0, sizeof(*r));
	return ctl_exec_run(x, &js);
}

static struct res run1(char *const *argv, const char *in, size_t in_len, unsigned timeout_ms,
		       size_t out_max)
{
	struct res r;
	struct ctl_job *j = go(&r, argv, in, in_len, timeout_ms, out_max);

	wait_all(&r, 1);
	if (!r.done) { /* a failing test must not leave a callback aimed at this frame */
		ctl_job_cancel(j);
		while (!r.done)
			lws_service(ctx, 0);
		r.done = false;
	}
	return r;
}

/* Gone, or a zombie waiting for init (it is dead; reaping is init's job). */
static bool dead(pid_t pid)
{
	char path[64], buf[256], *p;
	FILE *f;
	bool z = false;

	for (int i = 0; i < 100; i++) {
		if (kill(pid, 0) && errno == ESRCH)
			return true;
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
		f = fopen(path, "r");
		if (f && fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')))
			z = p[2] == 'Z';
		if (f)
			fclose(f);
		if (z)
			return true;
		usleep(10000);
	}
	return false;
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	while (d && readdir(d))
		n++;
	if (d)
		closedir(d);
	return n;
}

static void settle(void)
{
	/* lws closes dropped pipes asynchronously: give it a few turns */
	double end = now() + 0.3;

	while (now() < end)
		lws_service(ctx, 10);
}

static void test_exec(void)
{
	struct res r, many[5];
	double t0;

	{
		char *a[] = {"echo", "hello", NULL}; /* PATH lookup */
		r = run1(a, NULL, 0, 5000, 0);
		CHECK(r.done && r.end == CTL_JOB_EXITED && r.code == 0 && !strcmp(r.out, "hello\n"),
		      "echo hello: exit 0, stdout captured (%s)", r.desc);
		CHECK(r.pid > 0, "the started callback got the pid and its start time");
	}
	{
		char *a[] = {"/bin/echo", "$HOME; ls `id` | x", NULL};
		r = run1(a, NULL, 0, 5000, 0);
		CHECK(!strcmp(r.out, "$HOME; ls `id` | x\n"), "no shell: the argv is passed as is");
	}
	{
		char *a[] = {"/bin/sh", "-c", "echo oops >&2; echo out; exit 3", NULL};
		r = run1(a, NULL, 0, 5000, 0);
		CHECK(r.end == CTL_JOB_EXITED && r.code == 3 && !strcmp(r.err, "oops\n") &&
			  !strcmp(r.out, "out\n"),
		      "exit 3 with stdout and stderr apart");
		CHECK(!strcmp(r.desc, "exited 3: oops"), "described as '%s'", r.desc);
	}
	{
		size_t n = 300000; /* several pipe buffers: the writer must not block */
		char *in = malloc(n);
		char *a[] = {"/bin/sh", "-c", "wc -c", NULL};

		memset(in, 'x', n);
		r = run1(a, in, n, 10000, 0);
		CHECK(r.end == CTL_JOB_EXITED && atol(r.out) == (long)n,
		      "300000 bytes of stdin arrive whole (wc says %s)", r.out);
		free(in);
		char *cat[] = {"/bin/cat", NULL};
		r = run1(cat, "", 0, 5000, 0);
		CHECK(r.end == CTL_JOB_EXITED && r.code == 0 && r.out_len == 0,
		      "an empty stdin is an immediate EOF");
	}
	{
		char *a[] = {"/bin/sh", "-c",
			     "head -c 200000 /dev/zero | tr '\\0' a; echo done >&2", NULL};
		r = run1(a, NULL, 0, 5000, 1000);
		CHECK(r.end == CTL_JOB_EXITED && r.code == 0 && r.out_len == 1000 && r.trunc &&
			  !strcmp(r.err, "done\n"),
		      "output capped at 1000 bytes, truncated flag, the child still finishes");
	}
	{
		char *a[] = {"/bin/sleep", "30", NULL};
		t0 = now();
		r = run1(a, NULL, 0, 300, 0);
		CHECK(r.end == CTL_JOB_TIMEOUT && now() - t0 < 2 &&
			  !strcmp(r.desc, "timed out after 0.3s"),
		      "sleep 30 with a 300 ms timeout ends in %.2fs (%s)", now() - t0, r.desc);
	}
	{
		char pidfile[] = "/tmp/ec-drv-pid-XXXXXX", script[256];
		int fd = mkstemp(pidfile);
		char *a[] = {"/bin/sh", "-c", script, NULL};
		long gpid = 0;
		FILE *f;

		close(fd);
		/* the shell ignores SIGTERM; its background child is in its group */
		snprintf(script, sizeof(script), "trap '' TERM; sleep 30 & echo $! > %s; wait",
			 pidfile);
		t0 = now();
		r = run1(a, NULL, 0, 300, 0);
		CHECK(r.end == CTL_JOB_TIMEOUT && now() - t0 < 3,
		      "SIGTERM ignored: SIGKILL after the grace (%.2fs)", now() - t0);
		f = fopen(pidfile, "r");
		if (f && fscanf(f, "%ld", &gpid) != 1)
			gpid = 0;
		if (f)
			fclose(f);
		CHECK(gpid > 0 && dead((pid_t)gpid),
		      "the command's own child (pid %ld) died with its group", gpid);
		unlink(pidfile);
	}
	{
		char *a[] = {"/nonexistent/cmd", NULL};
		r = run1(a, NULL, 0, 1000, 0);
		CHECK(r.end == CTL_JOB_SPAWN_FAILED && r.code == ENOENT &&
			  !strcmp(r.desc, "cannot run: No such file or directory"),
		      "a missing binary: %s", r.desc);
	}
	{
		char *a[] = {"/bin/grep", "-E", "^Sig(Blk|Ign)", "/proc/self/status", NULL};
		unsigned long long blk = 1, ign = 1;

		r = run1(a, NULL, 0, 5000, 0);
		sscanf(r.out, "SigBlk: %llx SigIgn: %llx", &blk, &ign);
		/* (glibc's own internal signals 32 and 33 may show as ignored) */
		CHECK(blk == 0 && !(ign & (1ull << (SIGPIPE - 1))) &&
			  !(ign & (1ull << (SIGTERM - 1))),
		      "children start with nothing blocked, SIGPIPE and SIGTERM not ignored "
		      "(SigBlk %llx, SigIgn %llx)",
		      blk, ign);
	}
	{
		char *a[] = {"/bin/sh", "-c", "ls /proc/$$/fd; true", NULL};
		r = run1(a, NULL, 0, 5000, 0);
		CHECK(!strcmp(r.out, "0\n1\n2\n"), "the child holds only fds 0 1 2 (has: %s)",
		      r.out);
	}
	{
		char *a[] = {"/bin/sh", "-c",
			     "sleep 5 >/dev/null 2>&1 & echo $!; sleep 30 & exit 0", NULL};
		t0 = now();
		r = run1(a, NULL, 0, 10000, 0);
		CHECK(r.end == CTL_JOB_EXITED && now() - t0 < 2,
		      "a grandchild holding stdout does not hold the job (%.2fs)", now() - t0);
		kill(-(pid_t)r.pid, SIGKILL); /* the test's own cleanup of that group */
	}

	/* cap 2: five jobs of 0.3 s take three rounds */
	{
		char *a[] = {"/bin/sleep", "0.3", NULL};
		unsigned peak = 0;

		t0 = now();
		for (int i = 0; i < 5; i++)
			go(&many[i], a, NULL, 0, 5000, 0);
		CHECK(ctl_exec_queued(x) == 5 && ctl_exec_running(x) == 0,
		      "nothing starts inside ctl_exec_run (5 queued)");
		for (double end = now() + 5; now() < end;) {
			int left = 0;

			for (int i = 0; i < 5; i++)
				left += !many[i].done;
			peak = ctl_exec_running(x) > peak ? ctl_exec_running(x) : peak;
			if (!left)
				break;
			lws_service(ctx, 0);
		}
		int ok = 0;

		for (int i = 0; i < 5; i++)
			ok += many[i].done && many[i].end == CTL_JOB_EXITED && !many[i].code;
		CHECK(ok == 5 && peak == 2 && now() - t0 >= 0.85,
		      "5 jobs, at most 2 at once (peak %u), %.2fs", peak, now() - t0);
	}
	/* cancel: a running one and a queued one */
	{
		char *a[] = {"/bin/sleep", "30", NULL};
		struct ctl_job *j[3];

		t0 = now();
		for (int i = 0; i < 3; i++)
			j[i] = go(&many[i], a, NULL, 0, 0, 0);
		while (ctl_exec_running(x) < 2)
			lws_service(ctx, 0);
		ctl_job_cancel(j[0]);
		ctl_job_cancel(j[2]);
		CHECK(!many[0].done && !many[2].done, "cancel does not call back from inside");
		while (!many[0].done || !many[2].done)
			lws_service(ctx, 0);
		CHECK(many[0].end == CTL_JOB_CANCELLED && many[2].end == CTL_JOB_CANCELLED &&
			  many[2].ms == 0 && now() - t0 < 2,
		      "running and queued jobs cancelled (%.2fs)", now() - t0);
		ctl_job_cancel(j[1]);
		wait_all(many, 3);
		CHECK(many[1].end == CTL_JOB_CANCELLED, "the third one too");
	}
}

static void test_drivers(void)
{
	struct ec_conf c;
	struct ec_drv dv;
	struct res r;
	char **a, path[1100], dir[512], target[512], buf[64];
	struct stat st;
	int fd;

	memset(&c, 0, sizeof(c));
	strcpy(c.kubectl, "kubectl");
	strcpy(c.database, "/var/lib/xgate/edgeclusterd-e.db");
	c.driver = EC_DRIVER_KUBECTL;
	c.distro = EC_DISTRO_K3S;
	ec_drv_init(&dv, &c);
	a = ec_drv_kubectl_argv(&dv, true);
	CHECK(a && !strcmp(a[0], "k3s") && !strcmp(a[1], "kubectl") && !strcmp(a[2], "apply") &&
		  !strcmp(a[3], "-f") && !strcmp(a[4], "-") && !a[5],
	      "k3s: k3s kubectl apply -f -");
	ec_argv_free(a);
	CHECK(!strcmp(dv.workroot, "/var/lib/xgate/edgeclusterd-e.missions"),
	      "work root next to the database: %s", dv.workroot);
	strcpy(c.kubectl, "/opt/k/kubectl");
	strcpy(c.kubeconfig, "/etc/k.yaml");
	c.distro = EC_DISTRO_K8S;
	ec_drv_init(&dv, &c);
	a = ec_drv_kubectl_argv(&dv, false);
	CHECK(a && !strcmp(a[0], "/opt/k/kubectl") && !strcmp(a[1], "--kubeconfig") &&
		  !strcmp(a[2], "/etc/k.yaml") && !strcmp(a[3], "delete") &&
		  !strcmp(a[4], "--ignore-not-found") && !strcmp(a[5], "-f") && !a[7],
	      "k8s with Kubectl and Kubeconfig: .. --kubeconfig K delete --ignore-not-found -f -");
	ec_argv_free(a);

	char root[] = "/tmp/ec-drv-XXXXXX";

	if (!mkdtemp(root))
		return;
	snprintf(c.database, sizeof(c.database), "%s/e.db", root);
	c.driver = EC_DRIVER_LOCAL;
	ec_drv_init(&dv, &c);
	CHECK(!ec_drv_write_content(&dv, "m1", "kind: Pod\n", path, sizeof(path)),
	      "content written to %s", path);
	fd = open(path, O_RDONLY);
	memset(buf, 0, sizeof(buf));
	CHECK(fd >= 0 && read(fd, buf, sizeof(buf)) == 10 && !strcmp(buf, "kind: Pod\n") &&
		  !fstat(fd, &st) && (st.st_mode & 0777) == 0600,
	      "the content file holds the content, mode 0600");
	if (fd >= 0)
		close(fd);
	ec_drv_workdir(&dv, "m1", false, dir, sizeof(dir));
	CHECK(!stat(dir, &st) && (st.st_mode & 0777) == 0700, "work dir %s is 0700", dir);
	/* a symlink out of the work dir must be removed, not followed */
	snprintf(target, sizeof(target), "%s/keep", root);
	fd = open(target, O_CREAT | O_WRONLY, 0600);
	close(fd);
	snprintf(path, sizeof(path), "%s/link", dir);
	CHECK(!symlink(root, path), "a symlink to the work root's parent inside the work dir");
	snprintf(path, sizeof(path), "%s/sub", dir);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/sub/f", dir);
	close(open(path, O_CREAT | O_WRONLY, 0600));
	a = ec_drv_remove_argv(&dv, "m1");
	r = run1(a, NULL, 0, 5000, 0);
	CHECK(r.end == CTL_JOB_EXITED && !r.code && stat(dir, &st) && errno == ENOENT,
	      "the work dir is removed with what is in it (%s)", r.desc);
	CHECK(!stat(target, &st), "what the symlink pointed to is still there");
	r = run1(a, NULL, 0, 5000, 0);
	CHECK(r.end == CTL_JOB_EXITED && !r.code, "removing a missing work dir is fine");
	ec_argv_free(a);

	/* removed here without an rm process: missing, or only the content file */
	CHECK(ec_drv_remove_small(&dv, "m1") == 0, "small remove: a missing work dir is done");
	CHECK(!ec_drv_write_content(&dv, "m2", "x", path, sizeof(path)) &&
		  ec_drv_remove_small(&dv, "m2") == 0,
	      "small remove: a work dir with only the content file goes");
	ec_drv_workdir(&dv, "m2", false, dir, sizeof(dir));
	CHECK(stat(dir, &st) && errno == ENOENT, "and %s is gone", dir);
	ec_drv_workdir(&dv, "m3", true, dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/left", dir);
	close(open(path, O_CREAT | O_WRONLY, 0600));
	CHECK(ec_drv_remove_small(&dv, "m3") == -1 && !stat(path, &st),
	      "small remove: a dir with more in it is left to rm (nothing removed but content)");
	unlink(path);
	rmdir(dir);
	/* the work dir a symlink to a directory holding a file named content */
	snprintf(path, sizeof(path), "%s/content", root);
	close(open(path, O_CREAT | O_WRONLY, 0600));
	CHECK(!symlink(root, dir) && ec_drv_remove_small(&dv, "m3") == -1 && !stat(path, &st),
	      "small remove: a symlinked work dir is left to rm, its target untouched");
	unlink(dir);
	unlink(path);
	/* the work root is made when it is missing */
	rmdir(dv.workroot);
	CHECK(!ec_drv_workdir(&dv, "m4", true, dir, sizeof(dir)) && !stat(dir, &st) &&
		  S_ISDIR(st.st_mode),
	      "a work dir is made with its missing root");
	rmdir(dir);
	rmdir(dv.workroot);
	CHECK(!ec_drv_write_content(&dv, "m5", "y", path, sizeof(path)) && !stat(path, &st) &&
		  st.st_size == 1,
	      "the work root removed while the driver had it open: made again, %s written", path);
	unlink(path);
	ec_drv_workdir(&dv, "m5", false, dir, sizeof(dir));
	rmdir(dir);
	ec_drv_close(&dv);
	unlink(target);
	rmdir(dv.workroot);
	rmdir(root);
}

static void test_describe(void)
{
	struct ctl_job_result r = {.end = CTL_JOB_EXITED,
				   .code = 1,
				   .out = "a\nlast out\n\n",
				   .out_len = 12,
				   .err = "",
				   .err_len = 0};
	char b[128];

	ctl_job_describe(&r, b, sizeof(b));
	CHECK(!strcmp(b, "exited 1: last out"), "no stderr: the last line of stdout ('%s')", b);
	r.end = CTL_JOB_TIMEOUT;
	r.code = 5000;
	ctl_job_describe(&r, b, sizeof(b));
	CHECK(!strcmp(b, "timed out after 5s"), "%s", b);
	r.end = CTL_JOB_SIGNALED;
	r.code = 9;
	ctl_job_describe(&r, b, sizeof(b));
	CHECK(!strcmp(b, "killed by signal 9"), "%s", b);
}

static void test_state_text(void)
{
	char out[64];
	/* lone continuation, overlong NUL, surrogate, above U+10FFFF, NUL, then é and € */
	static const char bad[] =
	    "  a\x80\xc0\x80\xed\xa0\x80\xf4\x90\x80\x80\0b \xc3\xa9\xe2\x82\xac\n";

	ec_state_text(bad, sizeof(bad) - 1, out, sizeof(out), 1024);
	CHECK(!strcmp(out, "a???????????b \xc3\xa9\xe2\x82\xac"),
	      "state text: invalid UTF-8 -> '?': %s", out);
	ec_state_text("x\xc3\xa9\xc3\xa9", 5, out, sizeof(out), 4);
	CHECK(!strcmp(out, "x\xc3\xa9"), "cut at 4 bytes between characters (3 kept)");
	ec_state_text(" \n\t ", 4, out, sizeof(out), 1024);
	CHECK(!out[0], "only whitespace: empty");
}

int main(void)
{
	static const struct lws_protocols protos[] = {
	    {"none", lws_callback_http_dummy, 0, 0, 0, NULL, 0}, {NULL, NULL, 0, 0, 0, NULL, 0}};
	struct lws_context_creation_info info;
	int fds_before, fds_after;

	setvbuf(stdout, NULL, _IOLBF, 0); /* the lines survive an ASan abort */
	signal(SIGPIPE, SIG_IGN);	  /* as the daemon does: children must not inherit it */
	lws_set_log_level(LLL_ERR, NULL);
	memset(&info, 0, sizeof(info));
	info.port = CONTEXT_PORT_NO_LISTEN;
	info.protocols = protos;
	info.fd_limit_per_thread = 256;
	ctx = lws_create_context(&info);
	x = ctx ? ctl_exec_new(ctx, 2, 300) : NULL;
	CHECK(x != NULL, "an exec in an lws context (2 at once, 300 ms grace)");
	if (!x)
		return unit_summary();
	fds_before = count_fds();
	test_exec();
	settle();
	fds_after = count_fds();
	CHECK(fds_after == fds_before, "no fd left behind (%d before, %d after)", fds_before,
	      fds_after);
	test_drivers();
	test_describe();
	test_state_text();
	{
		/* freeing with a child running: it is stopped, no callback */
		char *a[] = {"/bin/sleep", "30", NULL};
		struct res r;
		double t0;

		go(&r, a, NULL, 0, 0, 0);
		while (ctl_exec_running(x) < 1)
			lws_service(ctx, 0);
		t0 = now();
		ctl_exec_free(x);
		CHECK(!r.done && r.pid > 0 && dead(r.pid) && now() - t0 < 1,
		      "ctl_exec_free stops a running child (%.2fs) without calling back",
		      now() - t0);
	}
	lws_context_destroy(ctx);
	return unit_summary();
}
