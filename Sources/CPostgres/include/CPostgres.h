#ifndef SHARE_CPOSTGRES_H
#define SHARE_CPOSTGRES_H

// libpq's API, from Debian's libpq-dev. `share` does not link libpq: the
// functions the queue calls are defined in libpq_loader.c, which loads
// libpq.so.5 (and the twenty libraries it needs: Kerberos, LDAP, GnuTLS …)
// the first time a command names a database, so every other command maps
// none of them (issue 59).
#include "/usr/include/postgresql/libpq-fe.h"

/// Loads libpq once (`name`: "libpq.so.5", or a debug build's test override)
/// and finds the functions the queue calls. NULL when they are there, else
/// why not (a string that lives as long as the process). Thread-safe: the
/// first call loads, the others return its result.
const char *share_libpq_load(const char *name);

#endif
