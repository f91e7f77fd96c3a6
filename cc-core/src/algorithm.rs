//! [`Algorithm`]: which controller runs a flow, and in which role, with
//! the names and codes scenarios, traces and the C API use. Made from the
//! one list ([`crate::registry`]) below the event API that carries it; what
//! needs an algorithm's types (its parameters, its configuration type) is
//! in [`crate::algorithms`], above it.

/// The enum and the methods that need only the list's names.
macro_rules! algorithm_enum {
    (
        $d:tt
        $(
            $(#[$cmeta:meta])*
            $field:ident: $($cfg:ident)::+, $title:literal {
                $( $(#[$vmeta:meta])* $variant:ident($ctrl:ty) = $name:literal, )+
            }
        )+
    ) => {
        /// Which controller runs a flow, and in which role: one variant per
        /// role of each algorithm of the [registry](crate::algorithms).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[cfg_attr(feature = "defmt", derive(defmt::Format))]
        pub enum Algorithm {
            $($( $(#[$vmeta])* $variant, )+)+
        }

        impl Algorithm {
            /// How many there are.
            pub const COUNT: usize = [$($(stringify!($variant),)+)+].len();

            /// Every algorithm, in the registry's order (the trace codec's
            /// and the C API's codes are their places here).
            pub const ALL: [Algorithm; Algorithm::COUNT] = [$($(Algorithm::$variant,)+)+];

            /// The name scenarios, the C API and reports use (`"dctcp"`).
            pub const fn name(self) -> &'static str {
                match self {
                    $($(Algorithm::$variant => $name,)+)+
                }
            }

            /// The algorithm of a [`Algorithm::name`], if any has it.
            pub fn from_name(name: &str) -> Option<Algorithm> {
                Algorithm::ALL.iter().copied().find(|a| a.name() == name)
            }

            /// The algorithm's code: its place in [`Algorithm::ALL`].
            pub const fn code(self) -> u8 {
                self as u8
            }

            /// The algorithm of a code, if any has it.
            pub fn from_code(code: u8) -> Option<Algorithm> {
                Algorithm::ALL.get(code as usize).copied()
            }

            /// The title of its configuration's algorithm, as reports
            /// print it (`"DCTCP"`; every role of HPCC++ says `"HPCC++"`).
            pub const fn title(self) -> &'static str {
                match self {
                    $($(Algorithm::$variant => $title,)+)+
                }
            }

            /// Whether it is the first role of its configuration (the one
            /// a scenario names: `hpcc`, not `hpcc-receiver`).
            pub const fn is_primary(self) -> bool {
                match self {
                    $( first_of!($($variant)+) => true, )+
                    #[allow(unreachable_patterns)]
                    _ => false,
                }
            }
        }
    };
}

with_registry!($ algorithm_enum);
