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
//! - An automatic stop's notification has the category "pier.undo", whose one action is
//!   "Restart" (registered once, with the permission question); its snapshot and label ride
//!   in the content's userInfo, so a press after Pier restarted still names them. The
//!   delegate hands a pressed Restart to the handler `on_restart` set, on the centre's queue.
//! - Every failure is logged, never shown.

use std::sync::{Mutex, OnceLock};

use block2::{DynBlock, RcBlock};
use objc2::rc::Retained;
use objc2::runtime::{AnyObject, Bool, ProtocolObject};
use objc2::{define_class, msg_send, AnyThread};
use objc2_foundation::{
    NSArray, NSBundle, NSDictionary, NSError, NSObject, NSObjectProtocol, NSSet, NSString, NSUUID,
};
use objc2_user_notifications::{
    UNAuthorizationOptions, UNMutableNotificationContent, UNNotification, UNNotificationAction,
    UNNotificationActionOptions, UNNotificationCategory, UNNotificationCategoryOptions,
    UNNotificationPresentationOptions, UNNotificationRequest, UNNotificationResponse,
    UNUserNotificationCenter, UNUserNotificationCenterDelegate,
};
use pier_core::worker::Undo;

use crate::desktop::{Note, OnRestart};
use crate::gate::{Gate, Step};

/// The category of a notification with a Restart button, and the button's identifier.
const CATEGORY: &str = "pier.undo";
const RESTART: &str = "restart";
/// The userInfo keys of an undo.
const SNAPSHOT: &str = "snapshot";
const LABEL: &str = "label";

static GATE: Mutex<Gate<Note>> = Mutex::new(Gate::new());
static ON_RESTART: OnceLock<OnRestart> = OnceLock::new();

/// Posts a notification without waiting for anything; outside an app bundle, logs it.
pub fn notify(note: Note) {
    // NOT RUN: no Mac here.
    let Some(center) = center() else {
        tracing::info!(
            "no notification outside Pier.app: {}: {}",
            note.summary,
            note.plain
        );
        return;
    };
    let summary = note.summary.clone();
    let step = match GATE.lock() {
        Ok(mut gate) => gate.offer(note),
        Err(_) => {
            tracing::warn!("no notification (an earlier one panicked): {summary}");
            return;
        }
    };
    match step {
        Step::Ask => ask(&center),
        Step::Wait => {}
        Step::Post(note) => post(&center, &note),
    }
}

/// What a pressed Restart does; set once, at start-up.
pub fn on_restart(f: OnRestart) {
    if ON_RESTART.set(f).is_err() {
        tracing::warn!("the notification's Restart handler was set twice; the first is kept");
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
    center.setNotificationCategories(&NSSet::from_slice(&[&*undo_category()]));
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
            for note in waiting {
                post(&center, &note);
            }
        } else {
            for note in waiting {
                tracing::info!(
                    "notifications are off for Pier (System Settings → Notifications): \
                     {}: {}",
                    note.summary,
                    note.plain
                );
            }
        }
    });
    center
        .requestAuthorizationWithOptions_completionHandler(UNAuthorizationOptions::Alert, &answer);
}

/// "pier.undo": one action, "Restart", which runs in the background (Pier has no window to
/// bring forward).
fn undo_category() -> Retained<UNNotificationCategory> {
    // NOT RUN: no Mac here.
    let restart = UNNotificationAction::actionWithIdentifier_title_options(
        &NSString::from_str(RESTART),
        &NSString::from_str("Restart"),
        UNNotificationActionOptions::empty(),
    );
    UNNotificationCategory::categoryWithIdentifier_actions_intentIdentifiers_options(
        &NSString::from_str(CATEGORY),
        &NSArray::from_slice(&[&*restart]),
        &NSArray::from_slice(&[]),
        UNNotificationCategoryOptions::empty(),
    )
}

/// Hands one notification to the centre, shown now, under an identifier of its own (one with
/// the same identifier would replace it); one with an undo in the "pier.undo" category.
fn post(center: &UNUserNotificationCenter, note: &Note) {
    // NOT RUN: no Mac here.
    let content = UNMutableNotificationContent::new();
    content.setTitle(&NSString::from_str(&note.summary));
    let body = match &note.undo {
        Some(undo) => {
            content.setCategoryIdentifier(&NSString::from_str(CATEGORY));
            let info = user_info(undo);
            // SAFETY: userInfo holds property-list objects; these are all NSStrings.
            unsafe { content.setUserInfo(&info) };
            &note.body
        }
        None => &note.plain,
    };
    content.setBody(&NSString::from_str(body));
    let id = NSUUID::new().UUIDString();
    let request = UNNotificationRequest::requestWithIdentifier_content_trigger(&id, &content, None);
    let summary = note.summary.clone();
    let done = RcBlock::new(move |error: *mut NSError| {
        if let Some(why) = described(error) {
            tracing::info!("no notification shown ({summary}): {why}");
        }
    });
    center.addNotificationRequest_withCompletionHandler(&request, Some(&done));
}

/// An undo as the notification carries it: {"snapshot": record name, "label": label}.
fn user_info(undo: &Undo) -> Retained<NSDictionary> {
    let keys = [NSString::from_str(SNAPSHOT), NSString::from_str(LABEL)];
    let values = [
        NSString::from_str(&undo.snapshot.to_string()),
        NSString::from_str(&undo.label),
    ];
    let dict = NSDictionary::from_slices(&[&*keys[0], &*keys[1]], &[&*values[0], &*values[1]]);
    // SAFETY: an NSDictionary of NSStrings is an NSDictionary of objects.
    unsafe { Retained::cast_unchecked(dict) }
}

/// The undo a pressed notification carries, if it is one of Pier's with a readable snapshot.
fn undo_of(response: &UNNotificationResponse) -> Option<Undo> {
    if response.actionIdentifier().to_string() != RESTART {
        return None;
    }
    let info = response.notification().request().content().userInfo();
    let text = |key: &str| -> Option<String> {
        let value: Retained<AnyObject> = info.objectForKey(&NSString::from_str(key))?;
        Some(value.downcast_ref::<NSString>()?.to_string())
    };
    Some(Undo {
        snapshot: text(SNAPSHOT)?.parse().ok()?,
        label: text(LABEL)?,
    })
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

    // SAFETY: the two methods below have the selectors and the argument and return types of
    // the protocol's `userNotificationCenter:willPresentNotification:withCompletionHandler:`
    // and `userNotificationCenter:didReceiveNotificationResponse:withCompletionHandler:`.
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

        /// A notification pressed: its Restart goes to the handler; the centre is told it
        /// was handled in any case.
        #[unsafe(method(userNotificationCenter:didReceiveNotificationResponse:withCompletionHandler:))]
        fn did_receive(
            &self,
            _center: &UNUserNotificationCenter,
            response: &UNNotificationResponse,
            handler: &DynBlock<dyn Fn()>,
        ) {
            // NOT RUN: no Mac here.
            if let (Some(undo), Some(f)) = (undo_of(response), ON_RESTART.get()) {
                f(undo);
            }
            handler.call(());
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
