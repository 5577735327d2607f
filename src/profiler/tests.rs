use super::names::aten_name;
use super::*;

#[test]
fn aten_names_follow_torch() {
    assert_eq!(aten_name("MulBackward0"), "mul");
    assert_eq!(aten_name("AsStridedScatterBackward0"), "as_strided_scatter");
    assert_eq!(aten_name("SplitWithSizesBackward0"), "split_with_sizes");
    assert_eq!(aten_name("TBackward0"), "t");
    assert_eq!(aten_name("ToCopyBackward0"), "_to_copy");
    assert_eq!(aten_name("CopyBackwards"), "copy");
    assert_eq!(aten_name("MaxBackward1"), "max");
    assert_eq!(aten_name("Log1PBackward0"), "log1p");
    assert_eq!(aten_name("Expm1Backward0"), "expm1");
}

#[test]
fn a_session_records_ranges_of_its_thread_only() {
    start(Config {
        record_shapes: true,
        ..Config::default()
    })
    .unwrap();
    assert!(
        start(Config::default()).is_err(),
        "not reentrant on one thread"
    );
    let x = Tensor::from_vec(vec![1.0f64, 2.0, 3.0], &[3]).unwrap();
    {
        let _outer = named_op_range("aten::outer_thing", std::slice::from_ref(&x));
        let _inner = op_range("MulBackward0", true, &[]);
    }
    std::thread::spawn(|| {
        let _r = named_op_range("aten::elsewhere", &[]);
    })
    .join()
    .unwrap();
    let handle = enter_user_range("label".into(), Some("a".into()));
    exit_user_range(handle);
    let rec = stop().unwrap();
    assert!(stop().is_err());
    let mut events = rec.events;
    events.sort_by_key(|e| e.id);
    let names: Vec<String> = events.iter().map(|e| e.name()).collect();
    assert_eq!(names, ["aten::outer_thing", "aten::mul_", "label"]);
    let (outer, inner) = (&events[0], &events[1]);
    assert!(outer.start_ns <= inner.start_ns && inner.end_ns <= outer.end_ns);
    assert_eq!(outer.inputs.as_ref().unwrap().shapes, vec![vec![3i64]]);
    assert_eq!(outer.inputs.as_ref().unwrap().dtypes, vec!["double"]);
    assert_eq!(events[2].args.as_deref(), Some("a"));
    assert_eq!(events[2].kind, Kind::UserAnnotation);
    // Nothing is recorded once stopped.
    assert!(op_range("MulBackward0", false, &[]).is_none());
    assert_eq!(enter_user_range("late".into(), None), 0);
}

#[test]
fn consecutive_sessions_each_record() {
    for _ in 0..3 {
        start(Config::default()).unwrap();
        drop(named_op_range("aten::thing", &[]));
        assert_eq!(stop().unwrap().events.len(), 1);
    }
}

#[test]
fn a_user_range_may_end_on_another_thread() {
    start(Config::default()).unwrap();
    let handle = enter_user_range("async".into(), None);
    std::thread::spawn(move || exit_user_range(handle))
        .join()
        .unwrap();
    let events = stop().unwrap().events;
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].name(), "async");
    assert!(events[0].end_ns >= events[0].start_ns);
}
