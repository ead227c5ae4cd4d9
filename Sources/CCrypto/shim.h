// OpenSSL's libcrypto (Debian libssl-dev): its EVP digests, SHA-256 with the
// CPU's SHA extensions where it has them.
#include <openssl/evp.h>
