// The libpq functions the queue calls, each forwarding to libpq.so.5 loaded
// at run time by share_libpq_load (see CPostgres.h). Defined with hidden
// visibility: they satisfy the package's own calls and are never exported,
// so libpq's calls to its own functions are not routed through them.
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#pragma GCC visibility push(hidden)
#include "CPostgres.h"

// Each function: its pointer, and a definition that calls it. A function
// called before the load succeeded returns what libpq returns for no
// connection or no result (the callers load first: see DatabaseURL.swift and
// PostgresConnection.swift).
#define LIBPQ_FUNCTIONS(X, V)                                                                                  \
    X(char *, PQerrorMessage, (const PGconn *conn), (conn), NULL)                                              \
    V(PQfreemem, (void *ptr), (ptr))                                                                           \
    V(PQfinish, (PGconn * conn), (conn))                                                                       \
    X(int, PQconsumeInput, (PGconn * conn), (conn), 0)                                                         \
    V(PQconninfoFree, (PQconninfoOption * options), (options))                                                 \
    X(ConnStatusType, PQstatus, (const PGconn *conn), (conn), CONNECTION_BAD)                                  \
    X(int, PQsocket, (const PGconn *conn), (conn), -1)                                                         \
    X(char *, PQresultErrorMessage, (const PGresult *res), (res), NULL)                                        \
    X(PQconninfoOption *, PQconninfoParse, (const char *conninfo, char **errmsg), (conninfo, errmsg), NULL)     \
    X(PQnoticeProcessor, PQsetNoticeProcessor, (PGconn * conn, PQnoticeProcessor proc, void *arg),             \
      (conn, proc, arg), NULL)                                                                                 \
    X(int, PQsendQueryPrepared,                                                                                \
      (PGconn * conn, const char *stmtName, int nParams, const char *const *paramValues,                       \
       const int *paramLengths, const int *paramFormats, int resultFormat),                                    \
      (conn, stmtName, nParams, paramValues, paramLengths, paramFormats, resultFormat), 0)                     \
    X(int, PQsendQueryParams,                                                                                  \
      (PGconn * conn, const char *command, int nParams, const Oid *paramTypes, const char *const *paramValues, \
       const int *paramLengths, const int *paramFormats, int resultFormat),                                    \
      (conn, command, nParams, paramTypes, paramValues, paramLengths, paramFormats, resultFormat), 0)         \
    X(int, PQsendQuery, (PGconn * conn, const char *query), (conn, query), 0)                                  \
    X(int, PQsendPrepare, (PGconn * conn, const char *stmtName, const char *query, int nParams,                \
                           const Oid *paramTypes),                                                             \
      (conn, stmtName, query, nParams, paramTypes), 0)                                                         \
    X(ExecStatusType, PQresultStatus, (const PGresult *res), (res), PGRES_FATAL_ERROR)                         \
    X(char *, PQresultErrorField, (const PGresult *res, int fieldcode), (res, fieldcode), NULL)                \
    X(char *, PQport, (const PGconn *conn), (conn), NULL)                                                      \
    X(int, PQntuples, (const PGresult *res), (res), 0)                                                         \
    X(PGnotify *, PQnotifies, (PGconn * conn), (conn), NULL)                                                   \
    X(int, PQnfields, (const PGresult *res), (res), 0)                                                         \
    X(int, PQisBusy, (PGconn * conn), (conn), 0)                                                               \
    X(char *, PQhost, (const PGconn *conn), (conn), NULL)                                                      \
    X(char *, PQgetvalue, (const PGresult *res, int row, int field), (res, row, field), NULL)                  \
    X(int, PQgetisnull, (const PGresult *res, int row, int field), (res, row, field), 1)                       \
    X(PGresult *, PQgetResult, (PGconn * conn), (conn), NULL)                                                  \
    X(char *, PQfname, (const PGresult *res, int field), (res, field), NULL)                                   \
    X(int, PQflush, (PGconn * conn), (conn), -1)                                                               \
    X(PQconninfoOption *, PQconninfo, (PGconn * conn), (conn), NULL)                                           \
    X(PGconn *, PQconnectStartParams, (const char *const *keywords, const char *const *values, int expand),    \
      (keywords, values, expand), NULL)                                                                        \
    X(PostgresPollingStatusType, PQconnectPoll, (PGconn * conn), (conn), PGRES_POLLING_FAILED)                 \
    V(PQclear, (PGresult * res), (res))

#define POINTER(type, name, params, args, fallback) static type(*real_##name) params;
#define VOID_POINTER(name, params, args) static void(*real_##name) params;
LIBPQ_FUNCTIONS(POINTER, VOID_POINTER)

#define DEFINE(type, name, params, args, fallback) \
    type name params { return real_##name ? real_##name args : fallback; }
#define VOID_DEFINE(name, params, args) \
    void name params {                  \
        if (real_##name) real_##name args;  \
    }
LIBPQ_FUNCTIONS(DEFINE, VOID_DEFINE)

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int tried;
static const char *load_name;
static const char *failure;
static char failure_text[512];

#define FIND(type, name, params, args, fallback) \
    if (!failure && !(*(void **)&real_##name = dlsym(library, #name))) fail_missing(#name);
#define VOID_FIND(name, params, args) FIND(void, name, params, args, 0)

static void fail_missing(const char *name) {
    snprintf(failure_text, sizeof failure_text, "%s has no %s", load_name, name);
    failure = failure_text;
}

static void load(void) {
    void *library = dlopen(load_name, RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        const char *why = dlerror();
        snprintf(failure_text, sizeof failure_text, "%s", why ? why : load_name);
        failure = failure_text;
        return;
    }
    LIBPQ_FUNCTIONS(FIND, VOID_FIND)
    if (failure) {
        // Half found is not found: no function forwards anywhere.
#define CLEAR(type, name, params, args, fallback) real_##name = NULL;
#define VOID_CLEAR(name, params, args) real_##name = NULL;
        LIBPQ_FUNCTIONS(CLEAR, VOID_CLEAR)
    }
}

const char *share_libpq_load(const char *name) {
    pthread_mutex_lock(&lock);
    if (!tried) {
        tried = 1;
        load_name = name;
        load();
    }
    const char *result = failure;
    pthread_mutex_unlock(&lock);
    return result;
}

#pragma GCC visibility pop
