//! The one error type of the core. Each variant knows which Python exception class it
//! becomes (the bindings map it); messages use torch's wording.

use std::any::Any;
use std::sync::Arc;

#[derive(Clone, Debug, thiserror::Error)]
pub enum Error {
    #[error("{0}")]
    Runtime(String),
    #[error("{0}")]
    Type(String),
    #[error("{0}")]
    Index(String),
    #[error("{0}")]
    Value(String),
    /// A rule or feature that does not exist yet; names what is missing.
    #[error("{0}")]
    NotImplemented(String),
    /// An error raised by user code running inside the engine (a Python hook or
    /// Function). The payload is opaque here; the bindings re-raise it unchanged.
    #[error("{message}")]
    External {
        message: String,
        payload: Arc<dyn Any + Send + Sync>,
    },
    /// A numerical failure of a decomposition (torch.linalg.LinAlgError, a
    /// RuntimeError subclass): singular or not positive-definite input.
    #[error("{0}")]
    LinAlg(String),
}

impl Error {
    pub fn runtime(msg: impl Into<String>) -> Self {
        Error::Runtime(msg.into())
    }
    pub fn type_error(msg: impl Into<String>) -> Self {
        Error::Type(msg.into())
    }
    pub fn index(msg: impl Into<String>) -> Self {
        Error::Index(msg.into())
    }
    pub fn value(msg: impl Into<String>) -> Self {
        Error::Value(msg.into())
    }
    pub fn not_implemented(msg: impl Into<String>) -> Self {
        Error::NotImplemented(msg.into())
    }
    pub fn linalg(msg: impl Into<String>) -> Self {
        Error::LinAlg(msg.into())
    }
}

pub type Result<T> = std::result::Result<T, Error>;

/// `bail!(Runtime, "...{}", x)` returns early with the given variant.
#[macro_export]
macro_rules! bail {
    ($kind:ident, $($arg:tt)*) => {
        return Err($crate::error::Error::$kind(format!($($arg)*)))
    };
}
