// SPDX-License-Identifier: BSD-2-Clause
/* nodeagentd's store on a real SQLite file: the revision goes up by one
 * with each reported change and only with it, survives a reopen (what a
 * kill -9 leaves), a write that fails leaves it alone, pods and sessions
 * come back as written (a session's owner too), a reset starts the node
 * again at 0, and a store of an older version gains the columns it lacks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <netinet/in.h>

#include <sqlite3.h>

#include "na_store.h"
#include "unit.h"

static struct na_pod pod(const char *id, enum na_pod_state st)
{
	struct na_pod p;

	memset(&p, 0, sizeof(p));
	snprintf(p.id, sizeof(p.id), "%s", id);
	snprintf(p.app, sizeof(p.app), "default/echo");
	p.state = st;
	p.slot = 3;
	p.ip_be = htonl(0x0a010105);
	p.pid = 4242;
	p.start = 987654321ull;
	p.ctrs[0] = (struct na_ctr){4242, 987654321ull};
	p.ctrs[1] = (struct na_ctr){4343, 987654999ull};
	p.n_ctrs = 2;
	p.standby = true;
	p.svc = true;
	p.spec = json_pack("{s:[{s:[s],s:[{s:i,s:s}]}]}", "containers", "command", "/bin/true",
			   "ports", "containerPort", 8080, "protocol", "TCP");
	return p;
}

struct seen {
	int pods, sessions;
	struct na_pod p;
	struct na_sess s;
};

static int on_pod(void *arg, struct na_pod *p)
{
	struct seen *v = arg;

	json_decref(v->p.spec);
	v->p = *p;
	v->pods++;
	return 0;
}

static int on_sess(void *arg, struct na_sess *s)
{
	struct seen *v = arg;

	free(v->s.data);
	v->s = *s;
	v->sessions++;
	return 0;
}

int main(void)
{
	char path[] = "/tmp/test_na_storeXXXXXX", db[64], err[256], buf[128];
	struct na_store s;
	struct na_pod p = pod("default/echo-1", NA_POD_CREATING);
	struct na_sess x;
	struct seen v;
	int64_t rev = -1;
	int fd = mkstemp(path);

	close(fd);
	unlink(path);
	snprintf(db, sizeof(db), "%s.db", path);
	CHECK(!na_store_open(&s, db, err, sizeof(err)), "open %s (%s)", db, err);
	CHECK_EXPR(na_store_revision(&s) == 0);
	CHECK(!na_store_pod_put(&s, &p, true, &rev) && rev == 1,
	      "a reported pod change: revision 1");
	CHECK(!na_store_pod_put(&s, &p, false, NULL) && na_store_revision(&s) == 1,
	      "a change not reported (its pid): the revision stays");
	p.state = NA_POD_STANDBY;
	CHECK(!na_store_pod_put(&s, &p, true, &rev) && rev == 2, "Standby: revision 2");
	CHECK(!na_store_bump(&s, &rev) && rev == 3, "a refused command: revision 3");
	{ /* the agent drops a running pod's spec: the stored one stays */
		json_t *spec = p.spec;

		p.spec = NULL;
		p.pid = 4343;
		CHECK(!na_store_pod_put(&s, &p, false, NULL), "a pod written without its spec");
		p.pid = 4242;
		CHECK(!na_store_pod_put(&s, &p, false, NULL), "and again (%s)",
		      na_store_errmsg(&s));
		p.spec = spec;
	}
	{
		struct na_pod q = pod("default/new", NA_POD_CREATING);

		json_decref(q.spec);
		q.spec = NULL;
		CHECK(na_store_pod_put(&s, &q, false, NULL) == -1,
		      "a new pod without a spec is refused");
	}

	memset(&x, 0, sizeof(x));
	snprintf(x.id, sizeof(x.id), "default/s1");
	snprintf(x.pod, sizeof(x.pod), "default/echo-1");
	x.state = NA_SESS_AVAILABLE;
	x.grace_s = 7;
	x.kill_on_close = true;
	x.data = strdup("aGVsbG8=");
	snprintf(x.owner, sizeof(x.owner), "891a34b312e96c1ef91e775d3f4ea78f");
	x.n_eps = 1;
	x.eps[0] = (struct na_endpoint){IPPROTO_TCP, htonl(0xc6336410), 30001, 8080};
	CHECK(!na_store_sess_put(&s, &x, true, &rev) && rev == 4, "a session change: revision 4");
	CHECK(!na_store_meta_put(&s, "credential", "abc") && na_store_revision(&s) == 4,
	      "the credential is no change of the node's state");

	/* a write that fails (a closed statement cache is not the point: a
	 * table gone) leaves the revision as it was */
	ctl_db_run(&s.sql, "ALTER TABLE sessions RENAME TO sessions_gone");
	CHECK(na_store_sess_put(&s, &x, true, &rev) == -1 && na_store_revision(&s) == 4,
	      "a failed write does not move the revision (%s)", na_store_errmsg(&s));
	ctl_db_run(&s.sql, "ALTER TABLE sessions_gone RENAME TO sessions");
	na_store_close(&s);

	/* what a kill -9 leaves: the same revision, the same records */
	CHECK(!na_store_open(&s, db, err, sizeof(err)), "reopen (%s)", err);
	CHECK(na_store_revision(&s) == 4, "the revision survives a reopen (%lld)",
	      (long long)na_store_revision(&s));
	memset(&v, 0, sizeof(v));
	CHECK(!na_store_load(&s, on_pod, on_sess, &v), "load");
	CHECK(v.pods == 1 && v.sessions == 1, "one pod, one session (%d, %d)", v.pods, v.sessions);
	CHECK(!strcmp(v.p.id, "default/echo-1") && v.p.state == NA_POD_STANDBY && v.p.slot == 3 &&
		  v.p.pid == 4242 && v.p.start == 987654321ull && v.p.standby && v.p.svc &&
		  v.p.ip_be == htonl(0x0a010105),
	      "the pod as written");
	CHECK(v.p.n_ctrs == 2 && v.p.ctrs[1].pid == 4343 && v.p.ctrs[1].start == 987654999ull,
	      "every container's pid and start time (%d)", v.p.n_ctrs);
	CHECK(v.p.n_ports == 1 && v.p.ports[0].port == 8080,
	      "its ports from its spec, kept by the writes without it");
	CHECK(!strcmp(v.s.id, "default/s1") && v.s.state == NA_SESS_AVAILABLE && v.s.grace_s == 7 &&
		  v.s.kill_on_close && !strcmp(v.s.data, "aGVsbG8=") && v.s.n_eps == 1 &&
		  v.s.eps[0].port == 30001 && v.s.eps[0].pod_port == 8080 &&
		  v.s.eps[0].ip_be == htonl(0xc6336410) &&
		  !strcmp(v.s.owner, "891a34b312e96c1ef91e775d3f4ea78f"),
	      "the session as written, endpoints and owner included ('%s')", v.s.owner);
	CHECK(na_store_meta_get(&s, "credential", buf, sizeof(buf)) == 0 && !strcmp(buf, "abc"),
	      "the credential");
	CHECK(na_store_meta_get(&s, "nothing", buf, sizeof(buf)) == 1 && !buf[0], "an absent key");
	{ /* checkpoints: not in the writes (SQLite's own would come at 1,000
	   * frames), in na_store_checkpoint, which restarts the WAL */
		char wal[80];
		struct stat sb;
		int i, frames = 0;

		snprintf(wal, sizeof(wal), "%s-wal", db);
		for (i = 0; i < 600 && !na_store_pod_put(&s, &v.p, true, &rev); i++)
			;
		CHECK(i == 600, "600 writes (%s)", na_store_errmsg(&s));
		frames = s.wal_frames;
		CHECK(frames > 1000 && !stat(wal, &sb) && sb.st_size > 1000 * 4096,
		      "no checkpoint in a write: the WAL holds %d frames, %lld bytes", frames,
		      (long long)sb.st_size);
		CHECK(na_store_checkpoint(&s) == 1, "a quiet-time checkpoint (%s)",
		      na_store_errmsg(&s));
		CHECK(s.wal_frames < 8, "the WAL started again (%d frames)", s.wal_frames);
		CHECK(na_store_checkpoint(&s) == 0, "nothing left for the next one");
		CHECK(!na_store_pod_put(&s, &v.p, true, &rev) && s.wal_frames < 16 &&
			  na_store_revision(&s) == rev,
		      "writes go on at the WAL's start (%d frames), the revision with them",
		      s.wal_frames);
	}
	CHECK(!na_store_sess_del(&s, "default/s1") && !na_store_pod_del(&s, "default/echo-1"),
	      "delete");
	/* form 2: the other host and the pod's address are kept with the endpoints */
	snprintf(x.id, sizeof(x.id), "default/s2");
	x.peer_be = htonl(0xc0000209);
	x.pod_ip_be = htonl(0x0a010107);
	x.eps[0] = (struct na_endpoint){IPPROTO_UDP, htonl(0xcb007101), 30009, 5353};
	free(v.s.data);
	v.s.data = NULL;
	v.sessions = 0;
	CHECK(!na_store_sess_put(&s, &x, false, NULL) && !na_store_load(&s, on_pod, on_sess, &v) &&
		  v.sessions == 1 && !strcmp(v.s.id, "default/s2") &&
		  v.s.peer_be == htonl(0xc0000209) && v.s.pod_ip_be == htonl(0x0a010107) &&
		  v.s.n_eps == 1 && v.s.eps[0].port == 30009 && v.s.eps[0].pod_port == 5353 &&
		  v.s.eps[0].proto == IPPROTO_UDP && v.s.eps[0].ip_be == htonl(0xcb007101),
	      "a form 2 entry comes back with its other host, pod address and endpoints");
	CHECK(!na_store_reset(&s) && na_store_revision(&s) == 0, "a reset starts again at 0");
	na_store_close(&s);
	CHECK(!na_store_open(&s, db, err, sizeof(err)) && na_store_revision(&s) == 0,
	      "and stays at 0 after a reopen");
	na_store_close(&s);
	json_decref(v.p.spec);
	json_decref(p.spec);
	free(v.s.data);
	free(x.data);
	unlink(db);
	snprintf(buf, sizeof(buf), "%s-wal", db);
	unlink(buf);
	snprintf(buf, sizeof(buf), "%s-shm", db);
	unlink(buf);

	/* a store of the one-container version, before session owners: the
	 * columns are added, its pod's pid is the one, its session has no owner
	 * and takes one when written again */
	{
		sqlite3 *old;

		CHECK(
		    sqlite3_open(db, &old) == SQLITE_OK &&
			sqlite3_exec(
			    old,
			    "CREATE TABLE pods(id TEXT PRIMARY KEY, app TEXT NOT NULL,"
			    " state TEXT NOT NULL, reason TEXT NOT NULL, message TEXT NOT NULL,"
			    " slot INTEGER NOT NULL, ip INTEGER NOT NULL, pid INTEGER NOT NULL,"
			    " start INTEGER NOT NULL, standby INTEGER NOT NULL, svc INTEGER NOT "
			    "NULL,"
			    " terminating INTEGER NOT NULL, spec TEXT NOT NULL);"
			    "INSERT INTO pods "
			    "VALUES('default/old','default/echo','Running','','',1,"
			    "0,777,888,0,0,0,'{\"containers\":[{\"ports\":[{\"containerPort\":80}"
			    "]}]}');"
			    "CREATE TABLE sessions(id TEXT PRIMARY KEY, pod TEXT NOT NULL,"
			    " state TEXT NOT NULL, reason TEXT NOT NULL, clients INTEGER NOT NULL,"
			    " grace INTEGER NOT NULL, kill INTEGER NOT NULL, data TEXT NOT NULL,"
			    " eps TEXT NOT NULL);"
			    "INSERT INTO sessions VALUES('default/o1','default/old','Available','',"
			    "0,60,1,'','[]')",
			    NULL, NULL, NULL) == SQLITE_OK,
		    "an older store made");
		sqlite3_close(old);
		memset(&v, 0, sizeof(v));
		CHECK(!na_store_open(&s, db, err, sizeof(err)) &&
			  !na_store_load(&s, on_pod, on_sess, &v) && v.pods == 1 &&
			  v.p.n_ctrs == 1 && v.p.ctrs[0].pid == 777 && v.p.ctrs[0].start == 888,
		      "an older store opens, its pod's one container is its pid (%s)", err);
		CHECK(v.sessions == 1 && !strcmp(v.s.id, "default/o1") && !v.s.owner[0],
		      "its session comes back without an owner (%d, '%s')", v.sessions, v.s.owner);
		snprintf(v.s.owner, sizeof(v.s.owner), "0123456789abcdef0123456789abcdef");
		CHECK(!na_store_sess_put(&s, &v.s, true, NULL), "and is written with one (%s)",
		      na_store_errmsg(&s));
		free(v.s.data);
		memset(&v.s, 0, sizeof(v.s));
		v.sessions = 0;
		CHECK(!na_store_load(&s, on_pod, on_sess, &v) && v.sessions == 1 &&
			  !strcmp(v.s.owner, "0123456789abcdef0123456789abcdef"),
		      "which it has when loaded ('%s')", v.s.owner);
		free(v.s.data);
		na_store_close(&s);
		CHECK(!na_store_open(&s, db, err, sizeof(err)), "and opens again (%s)", err);
		na_store_close(&s);
		json_decref(v.p.spec);
		unlink(db);
		snprintf(buf, sizeof(buf), "%s-wal", db);
		unlink(buf);
		snprintf(buf, sizeof(buf), "%s-shm", db);
		unlink(buf);
	}
	return unit_summary();
}
