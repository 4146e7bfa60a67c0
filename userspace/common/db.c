// SPDX-License-Identifier: BSD-2-Clause
/* SQLite glue; see db.h. */
#include <stdio.h>

#include "db.h"

int db_open(sqlite3 **db, const char *path, char *err, size_t errlen)
{
	*db = NULL;
	if (sqlite3_open_v2(path, db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
	    SQLITE_OK) {
		/* sqlite3_open_v2 returns a handle even on failure, for the message */
		snprintf(err, errlen, "%s: %s", path, *db ? sqlite3_errmsg(*db) : "out of memory");
		sqlite3_close(*db);
		*db = NULL;
		return -1;
	}
	/* another connection may hold the lock a moment: wait, do not fail */
	sqlite3_busy_timeout(*db, 2000);
	return 0;
}

int db_exec(sqlite3 *db, const char *path, const char *sql, char *err, size_t errlen)
{
	char *msg = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &msg) == SQLITE_OK)
		return 0;
	snprintf(err, errlen, "%s: %s", path, msg ? msg : sqlite3_errmsg(db));
	sqlite3_free(msg);
	return -1;
}
