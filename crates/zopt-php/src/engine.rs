//! Building and releasing engine values the way PHP's compiler does, for the write-back.
//!
//! Everything OPcache later persists (zend_persist.c) or PHP later destroys
//! (`destroy_op_array`) must come from the request allocator (`emalloc`), with the layout and
//! reference counts the compiler gives it:
//!
//! - strings: `zend_string_alloc` layout, refcount 1, then `zend_new_interned_string` (the
//!   compiler's `zval_make_interned_string`): under OPcache that returns the shared-memory
//!   interned copy when there is one, else our string, which persisting copies and releases;
//! - arrays: `zend_new_array` filled with `zend_hash_index_update` / `zend_hash_update` (as
//!   `zend_try_ct_eval_array` does), the empty array is the immutable `zend_empty_array`;
//! - constant ASTs: one `emalloc` block holding the `zend_ast_ref` header and every node in
//!   `zend_ast_copy` order, since persisting copies the nodes and frees the block at once.
//!
//! [`Engine`] is the proof that the caller runs on PHP's thread inside the optimizer pass,
//! where the engine allocator may be used.

use std::mem::{offset_of, size_of};
use std::ptr;

use zend_ir::model::{self as ir, ArrayKey, Ast, AstBody, Literal, PhpArray};

use crate::php::{self, zend_ast, zend_ast_list, zend_ast_ref, zend_ast_zval, zend_string, zval};

// zend_types.h
const Z_TYPE_FLAGS_SHIFT: u32 = 8;
const IS_TYPE_REFCOUNTED: u32 = 1 << 0;
const IS_TYPE_COLLECTABLE: u32 = 1 << 1;
const GC_NOT_COLLECTABLE: u32 = 1 << 4;
const GC_IMMUTABLE: u32 = 1 << 6;
/// `IS_STR_INTERNED`.
const IS_STR_INTERNED: u32 = GC_IMMUTABLE;
const GC_STRING: u32 = php::IS_STRING | GC_NOT_COLLECTABLE;
const GC_CONSTANT_AST: u32 = php::IS_CONSTANT_AST | GC_NOT_COLLECTABLE;
const IS_STRING_EX: u32 = php::IS_STRING | (IS_TYPE_REFCOUNTED << Z_TYPE_FLAGS_SHIFT);
const IS_INTERNED_STRING_EX: u32 = php::IS_STRING;
const IS_ARRAY_EX: u32 =
    php::IS_ARRAY | ((IS_TYPE_REFCOUNTED | IS_TYPE_COLLECTABLE) << Z_TYPE_FLAGS_SHIFT);
const IS_CONSTANT_AST_EX: u32 = php::IS_CONSTANT_AST | (IS_TYPE_REFCOUNTED << Z_TYPE_FLAGS_SHIFT);

/// `ZEND_MM_ALIGNED_SIZE_EX(size, alignment)`.
pub const fn aligned(size: usize, alignment: usize) -> usize {
    (size + alignment - 1) & !(alignment - 1)
}

/// Proof of being inside the optimizer pass, on PHP's only (NTS) thread, where the request
/// allocator and the interned-string table may be used.
#[derive(Clone, Copy)]
pub struct Engine {
    _private: (),
}

impl Engine {
    /// # Safety
    /// The caller runs on PHP's thread while the engine is active (a request, or the
    /// optimizer pass), so that `emalloc` and `zend_new_interned_string` may be called.
    pub unsafe fn new() -> Self {
        Engine { _private: () }
    }

    /// `emalloc(size)`: never NULL (PHP bails out when out of memory).
    pub fn emalloc(self, size: usize) -> *mut u8 {
        // SAFETY: Engine's invariant: the request allocator is live.
        unsafe { php::_emalloc(size) }.cast()
    }

    /// `emalloc(sizeof(zend_op_array))` as PHP's own code compiles it: the allocator's
    /// function for the size's bin, without the generic `_emalloc`'s bin lookup.
    pub fn emalloc_op_array(self) -> *mut php::zend_op_array {
        extern "C" {
            /// Zend/zend_alloc.c (`ZEND_MM_BINS_INFO`): exported for every small bin; it
            /// honours a custom heap (`USE_ZEND_ALLOC=0`) as `_emalloc` does.
            fn _emalloc_256() -> *mut std::ffi::c_void;
        }
        const SIZE: usize = std::mem::size_of::<php::zend_op_array>();
        const _: () = assert!(
            SIZE > 224 && SIZE <= 256,
            "zend_op_array is in the 256-byte bin"
        );
        // SAFETY: Engine's invariant: the request allocator is live.
        unsafe { _emalloc_256() }.cast()
    }

    /// `zend_arena_alloc(&CG(arena), size)`: request memory released all at once when the
    /// request ends, where the compiler puts what no destructor frees (class entries, the
    /// op_arrays of functions and methods, type lists, properties_info tables).
    pub fn arena_alloc(self, size: usize) -> *mut u8 {
        const HEADER: usize = aligned(std::mem::size_of::<php::zend_arena>(), 8);
        let size = aligned(size, 8);
        // SAFETY: Engine's invariant: a request (or compilation) is active, so CG(arena) is
        // a live arena, and only this thread uses it; the logic is zend_arena_alloc's.
        unsafe {
            let slot = std::ptr::addr_of_mut!(php::compiler_globals.arena);
            let arena = *slot;
            let ptr = (*arena).ptr;
            if size <= (*arena).end.offset_from(ptr) as usize {
                (*arena).ptr = ptr.add(size);
                return ptr.cast();
            }
            let current = (*arena).end.offset_from(arena.cast::<std::ffi::c_char>()) as usize;
            let arena_size = (size + HEADER).max(current);
            let fresh = self.emalloc(arena_size).cast::<php::zend_arena>();
            let start = fresh.cast::<std::ffi::c_char>().add(HEADER);
            (*fresh).ptr = start.add(size);
            (*fresh).end = fresh.cast::<std::ffi::c_char>().add(arena_size);
            (*fresh).prev = arena;
            *slot = fresh;
            start.cast()
        }
    }

    /// `efree(p)`.
    ///
    /// # Safety
    /// `p` was returned by `emalloc` and is not used afterwards.
    pub unsafe fn efree<T>(self, p: *mut T) {
        php::_efree(p.cast());
    }

    /// `emalloc`s an array of `values`, or returns NULL when there are none (as the compiler
    /// leaves empty tables).
    pub fn array_of<T: Copy>(self, values: &[T]) -> *mut T {
        if values.is_empty() {
            return ptr::null_mut();
        }
        let p = self.emalloc(std::mem::size_of_val(values)).cast::<T>();
        // SAFETY: `p` has room for `values.len()` elements of T (emalloc aligns to 8, which is
        // enough for every engine structure copied here) and does not overlap `values`.
        unsafe { ptr::copy_nonoverlapping(values.as_ptr(), p, values.len()) };
        p
    }

    /// `emalloc`s room for `n` values of `T`, uninitialised, or returns NULL when `n` is 0
    /// (as the compiler leaves empty tables).
    pub fn array_uninit<T>(self, n: usize) -> *mut T {
        if n == 0 {
            return ptr::null_mut();
        }
        self.emalloc(std::mem::size_of::<T>() * n).cast::<T>()
    }

    /// A new request string (`zend_string_init`): refcount 1, hash not computed.
    pub fn new_string(self, bytes: &[u8]) -> *mut zend_string {
        let header = offset_of!(zend_string, val);
        let s = self
            .emalloc(aligned(header + bytes.len() + 1, 8))
            .cast::<zend_string>();
        // SAFETY: the block has room for the header, the bytes and the terminating NUL.
        unsafe {
            (*s).gc.refcount = 1;
            (*s).gc.u.type_info = GC_STRING;
            (*s).h = 0;
            (*s).len = bytes.len();
            let val = s.cast::<u8>().add(header);
            ptr::copy_nonoverlapping(bytes.as_ptr(), val, bytes.len());
            *val.add(bytes.len()) = 0;
        }
        s
    }

    /// A string as the compiler stores names and literals: the interned string of `bytes`
    /// (`zend_string_init_interned`, which under OPcache returns the shared-memory copy when
    /// there is one and allocates only for a string not interned yet). The result is owned
    /// by the caller (one reference, none if interned).
    pub fn interned_string(self, bytes: &[u8]) -> *mut zend_string {
        // SAFETY: the engine sets both interning handlers before any script is compiled
        // (OPcache installs its own); init_interned reads `bytes` and returns a reference.
        unsafe {
            match (
                php::zend_string_init_interned,
                php::zend_new_interned_string,
            ) {
                (Some(init), _) => init(bytes.as_ptr().cast(), bytes.len(), false),
                (None, Some(intern)) => intern(self.new_string(bytes)),
                (None, None) => self.new_string(bytes),
            }
        }
    }

    /// `zend_string_release_ex(s, 0)`.
    ///
    /// # Safety
    /// `s` is a live request (or interned) string the caller holds a reference to.
    pub unsafe fn release_string(self, s: *mut zend_string) {
        if s.is_null() || is_interned(s) {
            return;
        }
        (*s).gc.refcount -= 1;
        if (*s).gc.refcount == 0 {
            self.efree(s);
        }
    }

    /// `zval_ptr_dtor_nogc(zv)`: drops the reference a zval holds.
    ///
    /// # Safety
    /// `zv` is a live zval owning a reference to its value.
    pub unsafe fn zval_ptr_dtor_nogc(self, zv: *mut zval) {
        let type_info = (*zv).u1.type_info;
        if type_info & (IS_TYPE_REFCOUNTED << Z_TYPE_FLAGS_SHIFT) == 0 {
            return;
        }
        let counted = (*zv).value.counted;
        (*counted).gc.refcount -= 1;
        if (*counted).gc.refcount == 0 {
            php::rc_dtor_func(counted);
        }
    }

    /// A string zval holding (and owning the caller's reference to) `s`: interned strings
    /// are not reference-counted.
    pub fn string_zval(self, s: *mut zend_string) -> zval {
        let mut zv = zval::default();
        zv.value.str_ = s;
        // SAFETY: `s` is a live string.
        let interned = unsafe { is_interned(s) };
        set_type(
            &mut zv,
            if interned {
                IS_INTERNED_STRING_EX
            } else {
                IS_STRING_EX
            },
        );
        zv
    }

    /// A zval holding `lit`, built as the compiler builds literals (see the module docs).
    /// `u2` is zero. The caller owns the reference the zval holds.
    pub fn zval(self, lit: &Literal) -> zval {
        let mut zv = zval::default();
        // SAFETY (all writes below): plain stores into the fields of a local zval.
        match lit {
            Literal::Null => set_type(&mut zv, php::IS_NULL),
            Literal::False => set_type(&mut zv, php::IS_FALSE),
            Literal::True => set_type(&mut zv, php::IS_TRUE),
            Literal::Long(n) => {
                zv.value.lval = *n;
                set_type(&mut zv, php::IS_LONG);
            }
            Literal::Double(d) => {
                // The bits as recorded (NaN payloads and -0.0 included).
                zv.value.lval = d.0 as i64;
                set_type(&mut zv, php::IS_DOUBLE);
            }
            Literal::String(s) => return self.string_zval(self.interned_string(s.as_bytes())),
            Literal::Array(entries) if entries.is_empty() && entries.next_free() == 0 => {
                // ZVAL_EMPTY_ARRAY: the shared immutable empty array.
                zv.value.arr = ptr::addr_of!(php::zend_empty_array).cast_mut();
                set_type(&mut zv, php::IS_ARRAY);
            }
            Literal::Array(entries) => {
                zv.value.arr = self.new_array(entries);
                set_type(&mut zv, IS_ARRAY_EX);
            }
            Literal::Ast(ast) => {
                zv.value.ast = self.ast(ast);
                set_type(&mut zv, IS_CONSTANT_AST_EX);
            }
        }
        zv
    }

    /// A new request array (`zend_new_array`) holding `entries` in order, as
    /// `zend_try_ct_eval_array` builds constant arrays, with their `nNextFreeElement`; the
    /// caller owns its one reference.
    pub fn new_array(self, entries: &PhpArray) -> *mut php::zend_array {
        let size = u32::try_from(entries.len()).unwrap_or(u32::MAX);
        // SAFETY: Engine's invariant; zend_new_array returns a fresh, empty request array.
        let ht = unsafe { php::_zend_new_array(size) };
        for (key, value) in entries {
            let mut value = self.zval(value);
            // SAFETY: `ht` is our live array; the update takes over the value's reference
            // (ZVAL_COPY_VALUE) and adds its own to a non-interned key, ours is released.
            unsafe {
                match key {
                    ArrayKey::Long(h) => {
                        php::zend_hash_index_update(ht, *h as php::zend_ulong, &mut value);
                    }
                    ArrayKey::Str(s) => {
                        let key = self.interned_string(s.as_bytes());
                        php::zend_hash_update(ht, key, &mut value);
                        self.release_string(key);
                    }
                }
            }
        }
        // SAFETY: `ht` is our live array; an optimizer's array may append elsewhere than its
        // keys say (after an unset, or negative keys added to `[]`).
        unsafe { (*ht).nNextFreeElement = entries.next_free() };
        ht
    }

    /// A `zend_ast_ref` with the whole tree in one block, laid out as `zend_ast_copy` does.
    fn ast(self, root: &Ast) -> *mut zend_ast_ref {
        let size = size_of::<zend_ast_ref>() + ast_tree_size(root);
        let block = self.emalloc(size);
        // SAFETY: the block holds the header plus exactly `ast_tree_size(root)` bytes of
        // nodes, which `write_ast` fills in order without overrunning (same size rules).
        unsafe {
            let r = block.cast::<zend_ast_ref>();
            (*r).gc.refcount = 1;
            (*r).gc.u.type_info = GC_CONSTANT_AST;
            let end = self.write_ast(root, block.add(size_of::<zend_ast_ref>()));
            debug_assert_eq!(end as usize - block as usize, size);
            r
        }
    }

    /// Writes `ast` at `buf` and its children after it; returns the end of what was written.
    ///
    /// # Safety
    /// `buf` has room for `ast_tree_size(ast)` bytes, aligned to 8.
    unsafe fn write_ast(self, ast: &Ast, buf: *mut u8) -> *mut u8 {
        match &ast.body {
            AstBody::Zval(lit) => {
                let node = buf.cast::<zend_ast_zval>();
                (*node).kind = ast.kind;
                (*node).attr = ast.attr;
                (*node).val = self.zval(lit);
                // Z_LINENO: the zval node keeps its line number in u2.
                (*node).val.u2.lineno = ast.lineno;
                buf.add(size_of::<zend_ast_zval>())
            }
            AstBody::Children(children) if is_list(ast.kind) => {
                let node = buf.cast::<zend_ast_list>();
                (*node).kind = ast.kind;
                (*node).attr = ast.attr;
                (*node).lineno = ast.lineno;
                (*node).children = children.len() as u32;
                let slots = ptr::addr_of_mut!((*node).child).cast::<*mut zend_ast>();
                let mut next = buf.add(list_size(children.len()));
                for (i, child) in children.iter().enumerate() {
                    match child {
                        Some(child) => {
                            *slots.add(i) = next.cast();
                            next = self.write_ast(child, next);
                        }
                        None => *slots.add(i) = ptr::null_mut(),
                    }
                }
                next
            }
            AstBody::Children(children) => {
                let node = buf.cast::<zend_ast>();
                (*node).kind = ast.kind;
                (*node).attr = ast.attr;
                (*node).lineno = ast.lineno;
                let slots = ptr::addr_of_mut!((*node).child).cast::<*mut zend_ast>();
                let mut next = buf.add(node_size(children.len()));
                for (i, child) in children.iter().enumerate() {
                    match child {
                        Some(child) => {
                            *slots.add(i) = next.cast();
                            next = self.write_ast(child, next);
                        }
                        None => *slots.add(i) = ptr::null_mut(),
                    }
                }
                next
            }
        }
    }
}

fn set_type(zv: &mut zval, type_info: u32) {
    zv.u1.type_info = type_info;
}

/// `ZSTR_IS_INTERNED(s)`.
///
/// # Safety
/// `s` points to a live zend_string.
pub unsafe fn is_interned(s: *const zend_string) -> bool {
    (*s).gc.u.type_info & IS_STR_INTERNED != 0
}

fn is_list(kind: u16) -> bool {
    (kind >> ir::ZEND_AST_IS_LIST_SHIFT) & 1 != 0
}

/// `zend_ast_list_size(children)`.
const fn list_size(children: usize) -> usize {
    size_of::<zend_ast_list>() - size_of::<*mut zend_ast>() + size_of::<*mut zend_ast>() * children
}

/// `zend_ast_size(children)`.
const fn node_size(children: usize) -> usize {
    size_of::<zend_ast>() - size_of::<*mut zend_ast>() + size_of::<*mut zend_ast>() * children
}

/// `zend_ast_tree_size`: bytes of the node and its subtree (without the `zend_ast_ref`).
fn ast_tree_size(ast: &Ast) -> usize {
    match &ast.body {
        AstBody::Zval(_) => size_of::<zend_ast_zval>(),
        AstBody::Children(children) => {
            let own = if is_list(ast.kind) {
                list_size(children.len())
            } else {
                node_size(children.len())
            };
            own + children.iter().flatten().map(ast_tree_size).sum::<usize>()
        }
    }
}

/// Why a constant-expression AST cannot be built: the shape the engine relies on is broken.
pub fn check_ast(ast: &Ast) -> Result<(), String> {
    match &ast.body {
        AstBody::Zval(_) => {
            if ast.kind != ir::ZEND_AST_ZVAL && ast.kind != ir::ZEND_AST_CONSTANT {
                return Err(format!("AST kind {} cannot hold a value", ast.kind));
            }
            if let AstBody::Zval(Literal::Ast(_)) = &ast.body {
                return Err("AST value node holding another constant expression".into());
            }
            if ast.kind == ir::ZEND_AST_CONSTANT
                && !matches!(&ast.body, AstBody::Zval(Literal::String(_)))
            {
                return Err("ZEND_AST_CONSTANT whose name is not a string".into());
            }
            Ok(())
        }
        AstBody::Children(children) => {
            let special = (ast.kind >> ir::ZEND_AST_SPECIAL_SHIFT) & 1 != 0 && !is_list(ast.kind);
            if special {
                return Err(format!("AST kind {} has no children layout", ast.kind));
            }
            if !is_list(ast.kind) {
                let declared = (ast.kind >> ir::ZEND_AST_NUM_CHILDREN_SHIFT) as usize;
                if declared != children.len() {
                    return Err(format!(
                        "AST kind {} has {declared} children, the node has {}",
                        ast.kind,
                        children.len()
                    ));
                }
            }
            children.iter().flatten().try_for_each(check_ast)
        }
    }
}

// The node sizes of zend_ast.h on 64-bit builds.
const _: () = assert!(
    size_of::<zend_ast_zval>() == 24 && node_size(2) == 24 && list_size(0) == 16,
    "unexpected zend_ast layout"
);
