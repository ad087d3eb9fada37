//! The flags of `remit destination set`: each setting of
//! `PATCH /v1/destinations/{id}`, by the same name.

macro_rules! set_args {
    ([{ $($before:tt)* } { $($after:tt)* }]
     $($name:ident: $ty:ident = $least:tt ..= $most:tt, $label:literal, $doc:literal;)*) => {
        /// What `remit destination set` changes; a flag left out keeps its
        /// value.
        #[derive(Debug, clap::Args)]
        pub struct SetArgs {
            $($before)*
            $(
                #[doc = $doc]
                #[arg(long)]
                pub $name: Option<$ty>,
            )*
            $($after)*
        }

        impl SetArgs {
            /// Each setting given, by its name, as the API's body holds it.
            pub fn settings_given(&self) -> Vec<(&'static str, serde_json::Value)> {
                let mut given = Vec::new();
                $(
                    if let Some(v) = self.$name {
                        given.push((stringify!($name), serde_json::json!(v)));
                    }
                )*
                given
            }
        }
    };
}

// The flags before the settings, then after them.
remit::destination_settings!(set_args {
    /// The destination's id.
    pub id: String,
    /// A new URL, admitted by the address policy as at registration.
    #[arg(long)]
    pub url: Option<String>,
} {
    /// How long a failure streak must last before it is disabled.
    #[arg(long)]
    pub disable_after_seconds: Option<i64>,
    /// How many failed attempts a streak must reach before it is disabled.
    #[arg(long)]
    pub disable_after_failures: Option<u32>,
    /// Give a setting back to the runtime (the configuration's entry for
    /// the destination, else its default), by its name (`burst`,
    /// `timeout_ms`, …); repeatable.
    #[arg(long, value_name = "SETTING")]
    pub reset: Vec<String>,
    /// A header sent with every request, `Name: value`; repeatable. Any of
    /// --header, --secret-header and --no-headers replaces every header it
    /// has (plain ones first, in order, then secret ones).
    #[arg(long, value_name = "NAME: VALUE")]
    pub header: Vec<String>,
    /// A secret header, `Name: value`, sealed at rest and never shown back;
    /// `Name` alone keeps the value stored under that name. Repeatable.
    #[arg(long, value_name = "NAME[: VALUE]", env = "REMIT_SECRET_HEADER")]
    pub secret_header: Vec<String>,
    /// Remove every header.
    #[arg(long, conflicts_with_all = ["header", "secret_header"])]
    pub no_headers: bool,
});
