//! The arena: memory for one event, reset when the event returns.
//!
//! Memory comes from `memory.grow` in chunks that nothing else touches, so
//! the arena coexists with any global allocator a plugin may add (they also
//! take fresh pages with `memory.grow`). Chunks are reused by later events;
//! what the first event of an instance allocated (during `configure`) is
//! kept for the life of the instance.

use core::ptr;

const MAX_CHUNKS: usize = 40;
const MIN_CHUNK: usize = 64 << 10;

struct Arena {
    chunks: [(usize, usize); MAX_CHUNKS], // (start, size)
    n: usize,
    cur: usize,
    ptr: usize,
    end: usize,
    floor_cur: usize,
    floor_ptr: usize,
}

static mut ARENA: Arena = Arena {
    chunks: [(0, 0); MAX_CHUNKS],
    n: 0,
    cur: 0,
    ptr: 0,
    end: 0,
    floor_cur: 0,
    floor_ptr: 0,
};

#[cfg(target_arch = "wasm32")]
fn grow(bytes: usize) -> usize {
    let pages = (bytes + 0xffff) >> 16;
    let old = core::arch::wasm32::memory_grow(0, pages);
    if old == usize::MAX {
        crate::abi::trap("out of memory (memory_limit_mb)");
    }
    old << 16
}

#[cfg(not(target_arch = "wasm32"))]
fn grow(bytes: usize) -> usize {
    // Native builds (for unit tests of plugin logic) leak from a static pool.
    static mut POOL: [u64; 1 << 17] = [0; 1 << 17];
    static mut USED: usize = 0;
    unsafe {
        let start = ptr::addr_of_mut!(POOL) as usize + USED;
        USED += (bytes + 7) & !7;
        assert!(USED <= 8 << 17, "toolwarden_pdk: native arena exhausted");
        start
    }
}

/// Returns `n` bytes, 8-aligned, valid until the arena is reset.
pub(crate) fn alloc(n: usize) -> *mut u8 {
    unsafe {
        let a = &mut *ptr::addr_of_mut!(ARENA);
        let n = (n + 7) & !7;
        if a.end - a.ptr < n {
            // Try the chunks later events already grew, then grow a new one.
            let mut i = if a.n == 0 { 0 } else { a.cur + 1 };
            while i < a.n && a.chunks[i].1 < n {
                i += 1;
            }
            if i >= a.n {
                if a.n == MAX_CHUNKS {
                    crate::abi::trap("arena: too many chunks");
                }
                let last = if a.n > 0 { a.chunks[a.n - 1].1 } else { 0 };
                let size = ((n.max(MIN_CHUNK).max(last * 2)) + 0xffff) & !0xffff;
                a.chunks[a.n] = (grow(size), size);
                i = a.n;
                a.n += 1;
            }
            a.cur = i;
            a.ptr = a.chunks[i].0;
            a.end = a.ptr + a.chunks[i].1;
        }
        let p = a.ptr;
        a.ptr += n;
        p as *mut u8
    }
}

/// Frees everything allocated since the last `keep`.
pub(crate) fn reset() {
    unsafe {
        let a = &mut *ptr::addr_of_mut!(ARENA);
        if a.n == 0 {
            return;
        }
        a.cur = a.floor_cur;
        a.ptr = if a.floor_ptr != 0 { a.floor_ptr } else { a.chunks[a.cur].0 };
        a.end = a.chunks[a.cur].0 + a.chunks[a.cur].1;
    }
}

/// Keeps everything allocated so far for the life of the instance.
pub(crate) fn keep() {
    unsafe {
        let a = &mut *ptr::addr_of_mut!(ARENA);
        a.floor_cur = a.cur;
        a.floor_ptr = a.ptr;
    }
}

/// Allocates a byte slice in the arena.
pub(crate) fn bytes<'a>(n: usize) -> &'a mut [u8] {
    unsafe { core::slice::from_raw_parts_mut(alloc(n), n) }
}

/// A growable byte buffer in the arena.
pub(crate) struct Buf<'a> {
    data: &'a mut [u8],
    len: usize,
}

impl<'a> Buf<'a> {
    pub(crate) fn new() -> Self {
        Buf { data: &mut [], len: 0 }
    }

    pub(crate) fn with_capacity(n: usize) -> Self {
        Buf { data: bytes(n), len: 0 }
    }

    pub(crate) fn push(&mut self, b: &[u8]) {
        if self.data.len() - self.len < b.len() {
            self.grow(b.len());
        }
        let dst = &mut self.data[self.len..self.len + b.len()];
        if b.len() <= 8 {
            // Short pieces (a quote, a key's punctuation) byte by byte:
            // memory.copy is a call out of the guest's code (wazero calls
            // the Go runtime's memmove), dearer than a few stores.
            for (d, s) in dst.iter_mut().zip(b) {
                *d = *s;
            }
        } else {
            dst.copy_from_slice(b);
        }
        self.len += b.len();
    }

    #[inline(never)]
    fn grow(&mut self, more: usize) {
        let cap = (self.data.len() * 2).max(self.len + more).max(256);
        let data = bytes(cap);
        data[..self.len].copy_from_slice(&self.data[..self.len]);
        self.data = data;
    }

    pub(crate) fn byte(&mut self, b: u8) {
        if self.len == self.data.len() {
            self.grow(1);
        }
        self.data[self.len] = b;
        self.len += 1;
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn into_bytes(self) -> &'a [u8] {
        let Buf { data, len } = self;
        &data[..len]
    }
}
