//! The recovery snapshot's behaviour: its members' commands in words, and how the store
//! versions it and knows its owner. The data is the model's (`model/snapshot.rs`).

use crate::model::snapshot::{ContainerSnapshot, Snapshot};
use crate::model::Identity;
use crate::store::{Owned, Versioned};

impl Snapshot {
    fn argv_of(&self, pid: u32) -> impl Iterator<Item = &[u8]> {
        let member = self.members.iter().find(|m| m.identity.pid == pid);
        member
            .into_iter()
            .flat_map(|m| m.argv.iter().map(|a| a.0.as_slice()))
    }

    /// A member's command line, whole, from its exact recorded argv, as a report carries it
    /// (empty when `pid` is not a member); a display shortens it.
    pub fn command_of(&self, pid: u32) -> String {
        crate::words::whole_command(self.argv_of(pid))
    }

    /// The same, short enough to name the member inside a sentence.
    pub fn short_command_of(&self, pid: u32) -> String {
        crate::words::short_command(self.argv_of(pid))
    }
}

impl Versioned for Snapshot {
    const SCHEMA: u32 = crate::model::SCHEMA_VERSION;
    fn schema(&self) -> u32 {
        self.schema
    }
}

impl Owned for Snapshot {
    fn owner(&self) -> Identity {
        self.root
    }
}

impl Versioned for ContainerSnapshot {
    const SCHEMA: u32 = crate::model::SCHEMA_VERSION;
    fn schema(&self) -> u32 {
        self.schema
    }
}

impl Owned for ContainerSnapshot {
    fn owner(&self) -> Identity {
        self.run()
    }
}
