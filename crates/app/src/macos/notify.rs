//! Notifications on macOS, through the UserNotifications framework (objc2 bindings).
//!
//! NOT RUN: no Mac here. Written from the objc2-user-notifications 0.3 and objc2 0.6 sources
//! and Apple's documentation, type-checked and linted with `cargo clippy --target
//! aarch64-apple-darwin`; the decisions that can be tested without a Mac are in
//! [`crate::gate`] (the permission question) and `login.rs` (the bundle identifier).
//!
//! - Only an app bundle has a notification centre: `currentNotificationCenter` raises an
//!   Objective-C exception in a process without a bundle identifier (`pier-app` run from
//!   `target/`), and an exception must not unwind into Rust. The bundle identifier is checked
//!   first; without one the notification is only logged.
//! - Permission (alerts, no sound) is asked once per process, with the first notification, and
//!   never waited for: the answer comes on a queue of the system's and releases what waited.
//! - tao makes the accessory app the active one at launch, and the centre shows nothing for the
//!   active app unless its delegate asks for it: Pier's asks for a banner and the list.
//! - Every failure is logged, never shown.

use std::sync::Mutex;

use block2::{DynBlock, RcBlock};
use objc2::rc::Retained;
use objc2::runtime::{Bool, ProtocolObject};
use objc2::{define_class, msg_send, AnyThread};
use objc2_foundation::{NSBundle, NSError, NSObject, NSObjectProtocol, NSString, NSUUID};
use objc2_user_notifications::{
    UNAuthorizationOptions, UNMutableNotificationContent, UNNotification,
    UNNotificationPresentationOptions, UNNotificationRequest, UNUserNotificationCenter,
    UNUserNotificationCenterDelegate,
};

use crate::gate::{Gate, Step};

/// A notification's title and body.
type Message = (String, String);

static GATE: Mutex<Gate<Message>> = Mutex::new(Gate::new());

/// Posts a notification without waiting for anything; outside an app bundle, logs it.
pub fn notify(summary: &str, body: &str) {
    // NOT RUN: no Mac here.
    let Some(center) = center() else {
        tracing::info!("no notification outside Pier.app: {summary}: {body}");
        return;
    };
    let message = (summary.to_owned(), body.to_owned());
    let step = match GATE.lock() {
        Ok(mut gate) => gate.offer(message),
        Err(_) => {
            tracing::warn!("no notification (an earlier one panicked): {summary}");
            return;
        }
    };
    match step {
        Step::Ask => ask(&center),
        Step::Wait => {}
        Step::Post((summary, body)) => post(&center, &summary, &body),
    }
}

/// The notification centre, where there is one: only for a process in an app bundle.
fn center() -> Option<Retained<UNUserNotificationCenter>> {
    // NOT RUN: no Mac here.
    NSBundle::mainBundle().bundleIdentifier()?;
    Some(UNUserNotificationCenter::currentNotificationCenter())
}

/// Sets the delegate and asks for permission; the answer posts (or logs) what waited for it.
fn ask(center: &UNUserNotificationCenter) {
    // NOT RUN: no Mac here.
    let delegate = Delegate::new();
    center.setDelegate(Some(ProtocolObject::from_ref(&*delegate)));
    // The centre holds its delegate weakly: keep this one for the life of the process.
    std::mem::forget(delegate);
    let answer = RcBlock::new(|granted: Bool, error: *mut NSError| {
        if let Some(why) = described(error) {
            tracing::warn!("the permission to notify could not be asked: {why}");
        }
        let waiting = GATE
            .lock()
            .map(|mut gate| gate.answered())
            .unwrap_or_default();
        if granted.as_bool() {
            // The bundle was checked before asking: the centre is there.
            let center = UNUserNotificationCenter::currentNotificationCenter();
            for (summary, body) in waiting {
                post(&center, &summary, &body);
            }
        } else {
            for (summary, body) in waiting {
                tracing::info!(
                    "notifications are off for Pier (System Settings → Notifications): \
                     {summary}: {body}"
                );
            }
        }
    });
    center
        .requestAuthorizationWithOptions_completionHandler(UNAuthorizationOptions::Alert, &answer);
}

/// Hands one notification to the centre, shown now, under an identifier of its own (one with
/// the same identifier would replace it).
fn post(center: &UNUserNotificationCenter, summary: &str, body: &str) {
    // NOT RUN: no Mac here.
    let content = UNMutableNotificationContent::new();
    content.setTitle(&NSString::from_str(summary));
    content.setBody(&NSString::from_str(body));
    let id = NSUUID::new().UUIDString();
    let request = UNNotificationRequest::requestWithIdentifier_content_trigger(&id, &content, None);
    let summary = summary.to_owned();
    let done = RcBlock::new(move |error: *mut NSError| {
        if let Some(why) = described(error) {
            tracing::info!("no notification shown ({summary}): {why}");
        }
    });
    center.addNotificationRequest_withCompletionHandler(&request, Some(&done));
}

/// The description of a completion handler's error argument, if there is one.
fn described(error: *mut NSError) -> Option<String> {
    // SAFETY: the framework passes null or a valid NSError that outlives the handler's call,
    // which is where this is called from; it is only read.
    let error = unsafe { error.as_ref() }?;
    Some(error.localizedDescription().to_string())
}

define_class!(
    // SAFETY: NSObject has no subclassing requirements, and `Delegate` does not implement
    // Drop. It has no state, so any thread may use it (the centre calls it on its own queue).
    #[unsafe(super(NSObject))]
    #[name = "PierNotificationDelegate"]
    struct Delegate;

    // SAFETY: NSObjectProtocol asks nothing that NSObject does not already do.
    unsafe impl NSObjectProtocol for Delegate {}

    // SAFETY: the one method below has the selector and the argument and return types of the
    // protocol's `userNotificationCenter:willPresentNotification:withCompletionHandler:`.
    unsafe impl UNUserNotificationCenterDelegate for Delegate {
        /// A notification arriving while Pier is the active app: show it all the same.
        #[unsafe(method(userNotificationCenter:willPresentNotification:withCompletionHandler:))]
        fn will_present(
            &self,
            _center: &UNUserNotificationCenter,
            _notification: &UNNotification,
            handler: &DynBlock<dyn Fn(UNNotificationPresentationOptions)>,
        ) {
            // NOT RUN: no Mac here.
            handler
                .call((UNNotificationPresentationOptions::Banner
                    | UNNotificationPresentationOptions::List,));
        }
    }
);

impl Delegate {
    fn new() -> Retained<Self> {
        let this = Self::alloc().set_ivars(());
        // SAFETY: NSObject's designated initialiser, called once on a fresh allocation.
        unsafe { msg_send![super(this), init] }
    }
}
