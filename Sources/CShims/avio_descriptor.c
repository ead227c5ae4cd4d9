// libavformat over an open descriptor (see shim_avio_descriptor.h).
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <libavutil/mem.h>
#include "shim_avio_descriptor.h"

// 64 KiB reads: what the file protocol would read at a time, and more.
#define SHIM_AVIO_BUFFER (64 * 1024)

struct shim_descriptor_io {
    int fd;
    int (*interrupted)(void *);
    void *opaque;
};

static int read_packet(void *opaque, uint8_t *buffer, int size) {
    struct shim_descriptor_io *io = opaque;
    if (io->interrupted && io->interrupted(io->opaque)) return AVERROR_EXIT;
    ssize_t count;
    do {
        count = read(io->fd, buffer, (size_t)size);
    } while (count < 0 && errno == EINTR);
    if (count < 0) return AVERROR(errno);
    if (count == 0) return AVERROR_EOF;
    return (int)count;
}

static int64_t seek(void *opaque, int64_t offset, int whence) {
    struct shim_descriptor_io *io = opaque;
    if (whence & AVSEEK_SIZE) {
        struct stat st;
        if (fstat(io->fd, &st) != 0) return AVERROR(errno);
        return (int64_t)st.st_size;
    }
    off_t position = lseek(io->fd, (off_t)offset, whence & ~AVSEEK_FORCE);
    return position < 0 ? AVERROR(errno) : (int64_t)position;
}

AVIOContext *shim_avio_open_descriptor(int fd, int (*interrupted)(void *), void *opaque) {
    // A pipe or FIFO cannot seek: it is read as a stream.
    int seekable = lseek(fd, 0, SEEK_SET) >= 0;
    struct shim_descriptor_io *io = malloc(sizeof *io);
    unsigned char *buffer = av_malloc(SHIM_AVIO_BUFFER);
    if (!io || !buffer) {
        free(io);
        av_free(buffer);
        return NULL;
    }
    io->fd = fd;
    io->interrupted = interrupted;
    io->opaque = opaque;
    AVIOContext *pb = avio_alloc_context(buffer, SHIM_AVIO_BUFFER, 0, io, read_packet, NULL, seek);
    if (!pb) {
        free(io);
        av_free(buffer);
        return NULL;
    }
    pb->seekable = seekable ? AVIO_SEEKABLE_NORMAL : 0;
    return pb;
}

void shim_avio_close_descriptor(AVIOContext **pb) {
    if (!pb || !*pb) return;
    free((*pb)->opaque);
    // libavformat may have replaced the buffer: free the one the context holds now.
    av_freep(&(*pb)->buffer);
    avio_context_free(pb);
}

static int refuse_nested_open(struct AVFormatContext *context, AVIOContext **pb, const char *url, int flags,
                              AVDictionary **options) {
    (void)context;
    (void)url;
    (void)flags;
    (void)options;
    *pb = NULL;
    return AVERROR(EPERM);
}

void shim_avformat_use_descriptor_io(AVFormatContext *context, AVIOContext *pb) {
    context->pb = pb;
    context->flags |= AVFMT_FLAG_CUSTOM_IO;
    context->io_open = refuse_nested_open;
}
