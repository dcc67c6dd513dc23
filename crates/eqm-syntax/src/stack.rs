//! A thread with a large stack for the compiler's recursive passes.
//!
//! Expression depth is bounded by the parser ([`crate::ast::MAX_EXPR_DEPTH`]), but the nesting
//! of classes, equations and statements is not, and every stage walks those recursively; a
//! large (lazily committed) stack keeps hostile input from overflowing it. Front ends run the
//! whole compiler inside [`with_compiler_stack`].
//!
//! Input: a closure, the work of a front end. Output: its result, computed on a new thread with
//! [`COMPILER_STACK_SIZE`] of stack. It deliberately bounds nothing itself: the parser bounds the
//! depth of expressions, and this only makes room for the rest.

/// Stack size for threads that run the compiler on user input.
pub const COMPILER_STACK_SIZE: usize = 1 << 30;

/// Runs `f` on a thread with [`COMPILER_STACK_SIZE`] bytes of stack and returns its result.
pub fn with_compiler_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let handle = std::thread::Builder::new()
        .name("eqm-compiler".to_string())
        .stack_size(COMPILER_STACK_SIZE)
        .spawn(f)
        .expect("the operating system refused to start the compiler thread");
    match handle.join() {
        Ok(value) => value,
        Err(panic) => std::panic::resume_unwind(panic),
    }
}
