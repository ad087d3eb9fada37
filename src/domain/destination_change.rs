//! What an operator's change of a destination asks (`PATCH
//! /v1/destinations/{id}`): each setting kept, given back to the runtime,
//! or set, each checked against its bounds with the field named.

use super::custom_header::header_field;
use super::custom_header::{CustomHeader, MAX_HEADERS};
use super::destination_settings::DestinationSettings;
use super::ids::InvalidInput;

/// One setting of a change: left as it is, back to the runtime's value, or
/// set.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub enum Setting<T> {
    #[default]
    Keep,
    Reset,
    Set(T),
}

impl<T: Copy> Setting<T> {
    /// The value after the change.
    pub fn apply(self, current: Option<T>) -> Option<T> {
        match self {
            Setting::Keep => current,
            Setting::Reset => None,
            Setting::Set(v) => Some(v),
        }
    }
}

macro_rules! change_struct {
    ([] $($name:ident: $ty:ident = $least:tt ..= $most:tt, $label:literal, $doc:literal;)*) => {
        /// What a `PATCH` of a destination asks: each field absent keeps its
        /// value; `headers`, when given, replaces the whole list (a secret
        /// header given without its value keeps the value stored under its
        /// name).
        #[derive(Debug, Clone, Default, PartialEq)]
        pub struct DestinationChange {
            pub url: Option<url::Url>,
            $(#[doc = $doc] pub $name: Setting<$ty>,)*
            pub disable_after_seconds: Setting<i64>,
            pub disable_after_failures: Setting<u32>,
            pub headers: Option<Vec<CustomHeader>>,
            /// Made against the destination as this tag says it was
            /// (`Destination::settings_tag`): refused if it has changed
            /// since.
            pub if_match: Option<String>,
        }

        impl DestinationChange {
            /// A change that sets every numeric setting as `settings` has
            /// it (an import's check of what it would write).
            pub fn setting_all(settings: &DestinationSettings) -> Self {
                Self {
                    $($name: settings.$name.map_or(Setting::Reset, Setting::Set),)*
                    ..Self::default()
                }
            }

            /// The numeric settings after the change, from those `was`
            /// holds (headers apart).
            pub fn settings_after(&self, was: &DestinationSettings) -> DestinationSettings {
                DestinationSettings {
                    $($name: self.$name.apply(was.$name),)*
                    headers: Vec::new(),
                }
            }

            /// Checks each numeric setting given against its bounds.
            fn validate_settings(&self) -> Result<(), InvalidInput> {
                $(
                    if let Setting::Set(v) = self.$name {
                        // A NaN rate is in no range, so refused too.
                        if !($least..=$most).contains(&v) {
                            return Err(InvalidInput::new(
                                stringify!($name),
                                format!("must be between {} and {}", $least, $most),
                            ));
                        }
                    }
                )*
                Ok(())
            }
        }
    };
}

crate::destination_settings!(change_struct);

impl DestinationChange {
    /// Checks each value given against its bounds, naming the field.
    pub fn validate(&self) -> Result<(), InvalidInput> {
        self.validate_settings()?;
        super::destination::DisableOverrides::new(
            match self.disable_after_seconds {
                Setting::Set(v) => Some(v),
                _ => None,
            },
            match self.disable_after_failures {
                Setting::Set(v) => Some(v),
                _ => None,
            },
        )?;
        if let Some(headers) = &self.headers {
            if headers.len() > MAX_HEADERS {
                return Err(InvalidInput::new(
                    "headers",
                    format!("at most {MAX_HEADERS} headers"),
                ));
            }
            for (i, h) in headers.iter().enumerate() {
                if headers[..i].iter().any(|o| o.name == h.name) {
                    return Err(InvalidInput::new(
                        header_field(i, "name"),
                        format!("{} is given twice", super::ids::quoted(&h.name)),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Whether it asks for nothing.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_name_their_field() {
        let cases: Vec<(DestinationChange, &str)> = vec![
            (
                DestinationChange {
                    rate_per_second: Setting::Set(0.0),
                    ..Default::default()
                },
                "rate_per_second",
            ),
            (
                DestinationChange {
                    burst: Setting::Set(0),
                    ..Default::default()
                },
                "burst",
            ),
            (
                DestinationChange {
                    timeout_ms: Setting::Set(5),
                    ..Default::default()
                },
                "timeout_ms",
            ),
            (
                DestinationChange {
                    late_after_seconds: Setting::Set(0),
                    ..Default::default()
                },
                "late_after_seconds",
            ),
            (
                DestinationChange {
                    disable_after_failures: Setting::Set(0),
                    ..Default::default()
                },
                "disable_after_failures",
            ),
        ];
        for (change, field) in cases {
            assert_eq!(change.validate().unwrap_err().field, field);
        }
        let twice = DestinationChange {
            headers: Some(vec![
                CustomHeader::new(0, "x-a", Some("1".into()), false).unwrap(),
                CustomHeader::new(1, "X-A", Some("2".into()), false).unwrap(),
            ]),
            ..Default::default()
        };
        assert_eq!(twice.validate().unwrap_err().field, "headers[1].name");
    }

    #[test]
    fn a_setting_keeps_resets_or_sets() {
        assert_eq!(Setting::Keep.apply(Some(3)), Some(3));
        assert_eq!(Setting::<u32>::Reset.apply(Some(3)), None);
        assert_eq!(Setting::Set(4).apply(Some(3)), Some(4));
    }
}
