//! f64 reference models.
