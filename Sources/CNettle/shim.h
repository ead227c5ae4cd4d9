// Nettle (Debian nettle-dev): its SHA-256, which Debian's fat build runs with
// the CPU's SHA extensions where it has them. Chosen over OpenSSL's libcrypto
// for what it maps: 0.3 MB resident against libcrypto's 3.3 MB in every
// `share` process (issue 59), at the same speed within a tenth.
#include <nettle/sha2.h>
