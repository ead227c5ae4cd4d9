#!/usr/bin/env python3
"""A TCP proxy that adds latency: every chunk is forwarded DELAY_MS after it
arrives, in each direction, so a round trip through it takes 2 * DELAY_MS more
(bench/distributed.sh: PostgreSQL "on another machine" at ~3 ms RTT).

    python3 bench/latency-proxy.py LISTEN_PORT TARGET_HOST TARGET_PORT DELAY_MS

Each direction of each connection has a reader thread and a sender thread
with a FIFO between them (order is kept; time.sleep is precise to tens of
microseconds, where asyncio's timers round up to whole milliseconds). Prints
"ready" once it listens; runs until killed.
"""
import queue
import socket
import sys
import threading
import time


def pipe(source, target, delay):
    """Copies source to target, each chunk `delay` seconds after it was read."""
    chunks = queue.SimpleQueue()

    def send():
        while True:
            due, chunk = chunks.get()
            if chunk is None:
                break
            wait = due - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            try:
                target.sendall(chunk)
            except OSError:
                break
        try:
            target.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    sender = threading.Thread(target=send, daemon=True)
    sender.start()
    while True:
        try:
            chunk = source.recv(65536)
        except OSError:
            chunk = b""
        if not chunk:
            chunks.put((0, None))
            break
        chunks.put((time.monotonic() + delay, chunk))
    sender.join()


def serve(client, host, port, delay):
    try:
        server = socket.create_connection((host, port))
    except OSError:
        client.close()
        return
    for s in (client, server):
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    other = threading.Thread(target=pipe, args=(server, client, delay), daemon=True)
    other.start()
    pipe(client, server, delay)
    other.join()
    client.close()
    server.close()


def main():
    listen_port, host, port, delay_ms = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", listen_port))
    listener.listen(128)
    print("ready", flush=True)
    while True:
        client, _ = listener.accept()
        threading.Thread(target=serve, args=(client, host, port, delay_ms / 1000), daemon=True).start()


if __name__ == "__main__":
    main()
