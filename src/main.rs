//! `coret-tui`: a thin shell over the `coret` engine. Argument parsing and output live in
//! `cli/`; everything that knows about code lives in the library.

mod cli;

// Indexing makes millions of small strings, vectors and syntax-tree nodes on every core;
// glibc's malloc spent 15 % of sympy's cold index in allocation and freeing. Rust's side and
// tree-sitter's C side (set in `main`) both allocate through mimalloc.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

unsafe extern "C" fn ts_calloc(count: usize, size: usize) -> *mut std::ffi::c_void {
    match count.checked_mul(size) {
        // SAFETY: mi_zalloc takes any size and returns null when it cannot allocate.
        Some(bytes) => unsafe { libmimalloc_sys::mi_zalloc(bytes) },
        None => std::ptr::null_mut(),
    }
}

fn main() {
    // A reader that closes the pipe (`coret-tui … | head`) ends the program as it ends `cat`:
    // quietly, by SIGPIPE (exit 141), not with a "failed printing to stdout" panic.
    #[cfg(unix)]
    // SAFETY: restoring a signal's default disposition before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    // SAFETY: set once, before any parser exists, so no tree is freed by another allocator.
    unsafe {
        tree_sitter::set_allocator(
            Some(libmimalloc_sys::mi_malloc),
            Some(ts_calloc),
            Some(libmimalloc_sys::mi_realloc),
            Some(libmimalloc_sys::mi_free),
        );
    }
    std::process::exit(cli::run());
}
