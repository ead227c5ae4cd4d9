// libvips 8.14's idle-worker race, closed by taking the idle expiry away.
//
// libvips runs every pipeline's work (vips_threadpool_run: vips_sink_disc
// under jpegsave and webpsave, vips_sink_memory under copy_memory, the
// write-behind buffers of sinkdisc.c) on the threads of one process-wide
// threadset (threadset.c). There, a worker with nothing to do waits for work
// at most 15 s (vips_semaphore_down_timeout(&member->idle, max_idle_time)) and
// then leaves. vips_threadset_run takes an idle worker off the free list,
// hands it the task and wakes it; when that happens while the worker's wait
// is timing out, the worker leaves anyway (it never reads the task) and frees
// itself: the task is lost and whoever waits for it waits for ever (the
// memory check's stalls: vips_threadpool_run waiting on the pool's
// semaphore, vips_jpegsave_buffer -> vips_sink_disc -> vips_threadpool_run
// with the workers idle). Fixed upstream by rewriting the threadset (libvips
// 8.16, commit 9b126dd "threadset: revise/simplify on top of GAsyncQueue");
// Debian 12 ships 8.14.1.
//
// The only caller of vips_semaphore_down_timeout in libvips 8.14 is that wait,
// and libvips calls it through its PLT (objdump -R libvips.so.42 lists a
// JUMP_SLOT for it): this definition, linked into the executable, comes first
// in the dynamic linker's search and replaces it for libvips too. Without the
// timeout an idle worker never leaves, so no task can be handed to one that is
// leaving; the workers stay until vips_shutdown kills them (with concurrency
// 1, a thread per caller and two per image being encoded, at their
// high-water mark). A libvips whose threadset does not call it is unaffected.
#include <dlfcn.h>
#include <vips/vips.h>
#include "CShims.h"

int vips_semaphore_down_timeout(VipsSemaphore *s, gint64 timeout) {
    (void)timeout;
    return vips_semaphore_down(s);
}

int shim_vips_idle_workers_never_leave(void) {
    void *found = dlsym(RTLD_DEFAULT, "vips_semaphore_down_timeout");
    return found == (void *)vips_semaphore_down_timeout ? 1 : 0;
}
