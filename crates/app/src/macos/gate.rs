//! What macOS notifications wait on: the user's answer to "Pier would like to send you
//! notifications". The first notification asks; those that come before the answer wait, since
//! the system's prompt may stay open a while; the answer releases them. Plain data, so its
//! tests run on Linux too (the rest of the macOS notification code cannot run here).

/// Where the one question of a process stands.
#[derive(Debug)]
pub enum Gate<T> {
    Unasked,
    /// Asked; these wait for the answer.
    Asking(Vec<T>),
    /// Answered: later notifications go straight to the notification centre, which refuses
    /// them itself (with an error to log) while notifications are off in System Settings, and
    /// takes them again when the user turns them on.
    Answered,
}

/// What to do with a notification just offered.
#[derive(Debug, PartialEq, Eq)]
pub enum Step<T> {
    /// Ask for permission now; the notification waits for the answer.
    Ask,
    /// The question is out; the notification waits for the answer.
    Wait,
    /// Post it.
    Post(T),
}

impl<T> Gate<T> {
    pub const fn new() -> Self {
        Gate::Unasked
    }

    pub fn offer(&mut self, item: T) -> Step<T> {
        match self {
            Gate::Unasked => {
                *self = Gate::Asking(vec![item]);
                Step::Ask
            }
            Gate::Asking(waiting) => {
                waiting.push(item);
                Step::Wait
            }
            Gate::Answered => Step::Post(item),
        }
    }

    /// The answer came: the notifications that waited for it, oldest first (to post when
    /// permission was given, to log when not).
    pub fn answered(&mut self) -> Vec<T> {
        match std::mem::replace(self, Gate::Answered) {
            Gate::Asking(waiting) => waiting,
            Gate::Unasked | Gate::Answered => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn asks_once_and_keeps_what_comes_before_the_answer() {
        let mut gate = Gate::new();
        assert_eq!(gate.offer("stopped"), Step::Ask);
        assert_eq!(
            gate.offer("restarted"),
            Step::Wait,
            "asked already: not twice"
        );
        assert_eq!(gate.answered(), ["stopped", "restarted"], "oldest first");
        assert_eq!(gate.offer("refused"), Step::Post("refused"));
        assert_eq!(gate.offer("done"), Step::Post("done"), "never asked again");
    }

    #[test]
    fn an_answer_releases_each_waiting_notification_once() {
        let mut gate = Gate::new();
        assert_eq!(gate.offer(1), Step::Ask);
        assert_eq!(gate.answered(), [1]);
        assert!(
            gate.answered().is_empty(),
            "a second answer has nothing left"
        );
        let mut unasked: Gate<u8> = Gate::new();
        assert!(unasked.answered().is_empty());
        assert_eq!(
            unasked.offer(2),
            Step::Post(2),
            "answered: posted, not asked"
        );
    }
}
