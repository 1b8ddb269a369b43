//! A growable array in the pdk's arena, for configure: what it allocates
//! lives as long as the instance (the pdk keeps configure's memory), and a
//! grown array leaves its old buffer behind, so at most twice the final size.

use crate::Alloc;

pub struct Vec<T: Copy + 'static> {
    ptr: *mut T,
    len: usize,
    cap: usize,
    alloc: Alloc<'static>,
}

impl<T: Copy + 'static> Vec<T> {
    pub fn new(alloc: Alloc<'static>) -> Self {
        Vec { ptr: core::ptr::NonNull::dangling().as_ptr(), len: 0, cap: 0, alloc }
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    #[inline]
    pub fn push(&mut self, x: T) {
        if self.len == self.cap {
            self.reserve(1);
        }
        // len < cap after reserve.
        unsafe { self.ptr.add(self.len).write(x) };
        self.len += 1;
    }

    pub fn pop(&mut self) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        let x = self.as_slice()[self.len - 1];
        self.len -= 1;
        Some(x)
    }

    pub fn truncate(&mut self, n: usize) {
        self.len = self.len.min(n);
    }

    pub fn clear(&mut self) {
        self.len = 0;
    }

    /// Makes room for `extra` more elements.
    pub fn reserve(&mut self, extra: usize) {
        if self.cap - self.len >= extra {
            return;
        }
        let cap = (self.cap * 2).max(self.len + extra).max(8);
        // The arena is 8-aligned, enough for every T used here.
        debug_assert!(core::mem::align_of::<T>() <= 8);
        let p = self.alloc.bytes(cap * core::mem::size_of::<T>()).as_mut_ptr() as *mut T;
        unsafe { core::ptr::copy_nonoverlapping(self.ptr, p, self.len) };
        self.ptr = p;
        self.cap = cap;
    }

    /// Appends a copy of elements [from, to).
    pub fn extend_from_within(&mut self, from: usize, to: usize) {
        assert!(from <= to && to <= self.len);
        self.reserve(to - from);
        unsafe { core::ptr::copy_nonoverlapping(self.ptr.add(from), self.ptr.add(self.len), to - from) };
        self.len += to - from;
    }

    pub fn extend_from_slice(&mut self, s: &[T]) {
        self.reserve(s.len());
        unsafe { core::ptr::copy_nonoverlapping(s.as_ptr(), self.ptr.add(self.len), s.len()) };
        self.len += s.len();
    }

    #[inline]
    pub fn as_slice(&self) -> &[T] {
        unsafe { core::slice::from_raw_parts(self.ptr, self.len) }
    }

    #[inline]
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        unsafe { core::slice::from_raw_parts_mut(self.ptr, self.len) }
    }

    /// The elements, for the life of the instance.
    pub fn into_static(self) -> &'static [T] {
        unsafe { core::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl<T: Copy + 'static> core::ops::Index<usize> for Vec<T> {
    type Output = T;
    #[inline]
    fn index(&self, i: usize) -> &T {
        &self.as_slice()[i]
    }
}

impl<T: Copy + 'static> core::ops::IndexMut<usize> for Vec<T> {
    #[inline]
    fn index_mut(&mut self, i: usize) -> &mut T {
        &mut self.as_mut_slice()[i]
    }
}
