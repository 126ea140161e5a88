//! What a setup sentence tells the user to do depends on where the folder's path came from.

use super::*;

fn said(which: Which, named: Named, folder: &str, problem: Problem) -> String {
    SetupError {
        which,
        named,
        folder: folder.into(),
        problem,
    }
    .to_string()
}

#[test]
fn the_users_variable_is_named_as_what_to_point_elsewhere_the_default_as_what_to_set() {
    let file = || Problem::NotFolder {
        at: "/home/u/.local/state/pier".into(),
        file: true,
    };
    assert_eq!(
        said(
            Which::State,
            Named::Default,
            "/home/u/.local/state/pier",
            file()
        ),
        "Pier's state folder /home/u/.local/state/pier is a file, not a folder; move it away, \
         or set PIER_STATE_DIR to a folder of your own"
    );
    assert_eq!(
        said(
            Which::State,
            Named::Variable,
            "/home/u/.local/state/pier",
            file()
        ),
        "Pier's state folder /home/u/.local/state/pier (PIER_STATE_DIR) is a file, not a \
         folder; move it away, or point PIER_STATE_DIR at a folder of your own"
    );
    let above = Problem::NotFolder {
        at: "/home/u/.config".into(),
        file: true,
    };
    assert_eq!(
        said(Which::Config, Named::Default, "/home/u/.config/pier", above),
        "Pier's configuration folder /home/u/.config/pier cannot be used: /home/u/.config is \
         a file, not a folder; move /home/u/.config away, or set PIER_CONFIG_DIR to a folder \
         of your own"
    );
    let denied = Problem::CannotMake {
        at: "/srv/pier".into(),
    };
    assert_eq!(
        said(Which::State, Named::Variable, "/srv/pier", denied),
        "Pier's state folder /srv/pier (PIER_STATE_DIR) is missing, and you may not make \
         folders in /srv; make it yourself, or point PIER_STATE_DIR at a folder of your own"
    );
}
