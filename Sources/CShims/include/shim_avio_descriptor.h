// libavformat reading from an open file descriptor instead of a path: a custom
// AVIOContext whose read and seek callbacks are C function pointers.
#ifndef SHIM_AVIO_DESCRIPTOR_H
#define SHIM_AVIO_DESCRIPTOR_H

#include <libavformat/avformat.h>

/// An AVIOContext reading `fd` from its start (read/lseek; AVSEEK_SIZE from
/// fstat; a pipe or FIFO is read as an unseekable stream). `interrupted(opaque)` is asked before every read: non-zero ends the
/// read with AVERROR_EXIT, as the file protocol's interrupt callback would. The
/// descriptor is not closed. NULL when out of memory. Free with shim_avio_close_descriptor.
AVIOContext *shim_avio_open_descriptor(int fd, int (*interrupted)(void *), void *opaque);

/// Frees an AVIOContext from shim_avio_open_descriptor (its buffer and state)
/// and sets *pb to NULL. Call after avformat_close_input, which leaves custom I/O alone.
void shim_avio_close_descriptor(AVIOContext **pb);

/// Makes `context` read through `pb` (AVFMT_FLAG_CUSTOM_IO) and refuses every
/// nested open (io_open): a playlist, a reference or an image sequence inside
/// a file must not make the demuxer open other files by name.
void shim_avformat_use_descriptor_io(AVFormatContext *context, AVIOContext *pb);

#endif
