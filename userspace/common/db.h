/* SPDX-License-Identifier: BSD-2-Clause */
/* SQLite glue both daemons' stores share; the schemas and the statements
 * stay with each store.c. */
#ifndef XG_DB_H
#define XG_DB_H

#include <sqlite3.h>
#include <stddef.h>

/* Open (creating) the database at path; a statement waits up to 2 s for a
 * lock another connection holds. 0, or -1 with "PATH: why" in err and *db
 * NULL. */
int db_open(sqlite3 **db, const char *path, char *err, size_t errlen);
/* Run sql (a schema: several statements); 0, or -1 with "PATH: why". */
int db_exec(sqlite3 *db, const char *path, const char *sql, char *err, size_t errlen);

#endif
