//! What goes wrong at a scene's table beside the engine's own errors (the store, files) and the
//! scene's ([`crate::Error`]): named here so the engine names no game. Each reaches the caller as
//! the engine's [`troupe_engine::Error::Game`], with the same words.

/// A scene table's own failure.
#[derive(Debug, thiserror::Error)]
pub enum SceneTableError {
    #[error("the model failed: {message}")]
    Model { message: String },
    #[error(
        "the scene's changes could not be kept in the world: {message} (the scene's end is \
         saved: once that is mended, `troupe scene resume` keeps them)"
    )]
    World { message: String },
    #[error("{path} is not world knowledge: {message}")]
    WorldFile { path: String, message: String },
}

impl SceneTableError {
    /// The model's failure inside an engine error, if that is what it is.
    pub fn model_failure(e: &troupe_engine::Error) -> Option<&str> {
        let troupe_engine::Error::Game(game) = e else {
            return None;
        };
        match game.downcast_ref::<SceneTableError>()? {
            SceneTableError::Model { message } => Some(message),
            SceneTableError::World { .. } | SceneTableError::WorldFile { .. } => None,
        }
    }
}

impl From<SceneTableError> for troupe_engine::Error {
    fn from(e: SceneTableError) -> Self {
        troupe_engine::Error::game(e)
    }
}
