// Package logio reads and writes the logs of package dataset: CSV and
// TSV (either gzip-compressed) and Parquet files, other tools' column
// names mapped to ihope's, labels of named states and actions, the
// checks that refuse a hostile file with a message naming its file, row
// and column, and the hints that say which flags would read it.
//
// # The log contract
//
// A log is a CSV file with a header row (or TSV, either gzip-compressed:
// see Format), or a Parquet file with the same column names, one row per
// step:
//
//	episode                          episode id, any non-empty string; a continuing task is one long episode
//	t                                step index within the episode: 0, 1, 2, ... without gaps
//	state | state_0 ... state_{d-1}  a discrete state id (integer >= 0), or a real state vector
//	action | action_0 ...            a discrete action id (integer >= 0), or a real action vector
//	reward                           the reward of the step
//	behavior_prob | behavior_logprob optional: pi0(a_t|s_t), or its logarithm
//	target_prob | target_logprob     pi(a_t|s_t), or its logarithm; may be omitted when target_prob_k are given
//	target_prob_0 ... target_prob_{K-1}
//	                                 optional, discrete actions only: pi(k|s_t) for every action k
//	next_state | next_state_0 ...    optional: the state after the step
//	next_target_prob_0 ... next_target_prob_{K-1}
//	                                 optional: pi(k|s') at the state after an episode's last step
//	terminal                         optional: 1 on an episode's last row if it ended in a terminal state, else 0
//	truncated                        optional: 1 on an episode's last row if it was cut off there (a time limit), else 0
//
// Without episode and t columns, a log whose rows are its episodes' steps
// in order (d3rlpy's and Minari's flat dumps, Gymnasium's terminated and
// truncated) is read in row order: an episode ends after each row whose
// terminal or truncated is 1, a last episode without either is cut off,
// and the episodes get the ids 0, 1, 2, .... ReadOptions.OneStep (the
// command line's --bandit) reads a log without them as episodes of one
// step each, ended in a terminal state: a contextual bandit's log.
// Neither can be split into shards.
//
// The behavior probabilities are optional (medical records, human
// operators and legacy systems rarely log them). Without them LogBehavior
// is nil (dataset.Dataset.HasBehavior is false): the estimators that weigh by
// pi/pi0 refuse the log, and package behavior fits pi0 from the logged
// (state, action) pairs. With them, FindBehaviorConflict checks that a
// discrete (state, action) pair has one probability wherever it is
// logged.
//
// Rows may come in any order: they are sorted by episode, in the order of
// each episode's first row, then by t. Episodes may have different lengths.
// Columns may come in any order. Every other column is refused (a mistyped
// name would otherwise be lost), and so is a column given twice or under
// both of its names (state and state_0, behavior_prob and
// behavior_logprob). Vector columns are numbered from 0 without gaps.
//
// Values:
//
//   - Ids and t are integers in [0, 2^31 - 1]; "3", "3.0" and "3e0" are the
//     same id (some tools write integer columns as floats), "3.5" is
//     refused.
//   - Every number is finite: NaN and infinities, in any spelling that Go's
//     strconv.ParseFloat accepts ("NaN", "nan", "Inf", "+Inf", "infinity"),
//     are refused, with one exception: target_logprob may be -Inf. Go's
//     literal syntax that strconv.ParseFloat also reads, underscores
//     ("1_000") and hexadecimal floats ("0x1p-2"), is refused.
//   - With discrete actions, behavior_prob lies in (0, 1] and target_prob
//     (and target_prob_k, next_target_prob_k) in [0, 1];
//     log-probabilities are at most 0. With vector actions they
//     are densities: behavior_prob > 0 and target_prob >= 0, and their
//     logarithms may be positive.
//   - A target probability of 0 is valid: the target never takes that
//     action. It is stored as LogTarget = math.Inf(-1), so the step's
//     importance ratio is 0. A behavior probability of 0 is not: the
//     logged action could not have been taken.
//   - The next state of a step is the state of the following row of its
//     episode. next_state is needed only on an episode's last row; there,
//     an empty value (a null in Parquet) means the episode has no final state. On another
//     row it may be empty, and if given it must equal the state of the
//     following row. A next-state vector is given whole or not at all.
//
// The target's whole action distribution (discrete actions only):
//
//   - target_prob_0 ... target_prob_{K-1} give pi(k|s_t) for every action
//     k. They are given on every row or not at all: all K columns are
//     present, and an empty value (a null) on any row is refused. Each
//     value lies in [0, 1] and each row's values sum to 1 within 1e-6.
//   - K is at least the number of actions, 1 + the largest action id:
//     larger K are actions never logged, and a row whose action id is K
//     or more is refused (at its action column). NumActions is then K.
//   - target_prob or target_logprob may be given as well; then the
//     logged action's probability, exp of the log-probability, must agree
//     with target_prob_{a_t} within 1e-6 (absolute), and LogTarget is the
//     logged value. Without them LogTarget = log target_prob_{a_t} (-Inf
//     for 0). A problem of a whole row (its sum) is reported at
//     target_prob_0, a disagreement at target_prob or target_logprob.
//   - next_target_prob_0 ... next_target_prob_{K-1} need the
//     target_prob_k columns (one for each) and the next_state column(s).
//     They give pi(k|s') at the next state, on an episode's last row
//     that gives next_state, by the same rules (given whole or not at
//     all); on any other row they must be empty. An episode whose last
//     row has none has HasFinalTarget false (pi after it unknown).
//   - With real actions (action_0 ...) these columns are refused.
//
// They are stored in dataset.Dataset.TargetProbs (NumActions per step) and
// FinalTargetProbs and HasFinalTarget (per episode). A target policy file
// (dataset.Dataset.SetTargetPolicy) fills the same columns.
//
// Episodic tasks: the terminal column (d3rlpy's terminals) says that an
// episode ended in a terminal state, after which the process sits in an
// absorbing state with reward 0 under every action; an episode whose last
// row says 0 was merely cut off. It holds 0 or 1 (true and false in any
// case are read too; in Parquet an integer or a float column), is 1 on at
// most an episode's last row (a 1 elsewhere is refused at that row and
// column), and is stored per episode in dataset.Dataset.Terminal (nil without the
// column). The truncated column (d3rlpy's timeouts, Gymnasium's and
// RLlib's truncated) follows the same rules; a row whose truncated is 1
// was cut off, even where terminal is 1 too (old gym's done is 1 at a
// time limit, beside TimeLimit.truncated), so its episode has Terminal
// false. A terminal row's next_state, if given, is kept but not used:
// the estimators read the log through dataset.Dataset.Absorbing, which makes the
// absorbing state explicit.
//
// The dataset read has, for discrete states, NumStates = 1 + the largest
// state id in state and next_state, and NumActions = 1 + the largest action
// id, or K with target_prob_k columns. For vector states StateDim = d and
// the Obs column is set; for vector actions ActionDim = d and ActionVec is
// set. An episode whose last row has no next state has HasFinal false.
//
// # Other tools' logs
//
// ReadOptions read a file whose columns are named otherwise: Columns maps
// a contract column onto the file's (behavior_prob onto pscore, or a
// vector prefix, state_ onto obs_), Ignore drops columns, and Categorical
// reads state and action labels (strings), numbered in sorted order
// (Labels). A column that is neither is still refused, and the message
// names the flag that reads it: other OPE tools' names (pscore,
// trajectory_id, step, action_prob, obs_k, terminals, done, ...) get --column
// behavior_prob=pscore and the like, near misses of a contract name
// ("Episode", "rewrad") --column episode=Episode, any other --ignore
// user_id. All problems of a header are reported in one error, with the
// flags that fix them on its last line.
//
// A file that is not what its name says gets a message saying what it
// looks like: gzip-compressed data, UTF-16 text, a Parquet file or a
// spreadsheet named .csv; CSV text named .parquet; a header split by
// semicolons or tabs in a .csv. These checks look only at what no
// contract header holds (control bytes in the header line, a header of one
// column), so they change the messages of files refused anyway.
//
// # CSV details
//
// Fields may be quoted as in RFC 4180 (quoted fields may hold commas,
// quotes written as "", and line breaks). Lines may end with LF or CRLF; a
// UTF-8 byte-order mark is skipped. Numbers may not carry spaces. Empty
// lines at the end of the file are ignored; an empty line between data
// rows is refused. A last line without a line end and with too few fields
// is reported as truncated.
//
// TSV is CSV with tabs between fields, quoted the same way. A gzip
// stream (.csv.gz, .tsv.gz) is decompressed in a goroutine of its own,
// beside the parsing.
//
// # Parquet details
//
// Columns are flat (a nested column may be ignored). Integer columns may
// be INT32 or INT64 (signed or unsigned), or FLOAT or DOUBLE holding whole
// numbers; real columns any of these four; episode, and categorical state
// and action, a string (BYTE_ARRAY) or an integer. Decimal, date, time and
// other annotated types are refused. Any column may be optional, but a
// null counts as an empty value. Pages may be compressed with snappy,
// gzip, brotli, zstd or lz4_raw, and encoded plainly, with a dictionary,
// DELTA_BINARY_PACKED, DELTA_LENGTH_BYTE_ARRAY, DELTA_BYTE_ARRAY or
// BYTE_STREAM_SPLIT, in data pages of either version.
//
// A damaged or hostile file cannot make the reader allocate more than a
// fixed amount and a multiple of its own size: before parquet-go reads
// it, the metadata and every page of the columns read are checked against
// the file (every list and string fits in the bytes after it, at most 64
// rows per byte of the file, a page decompresses to at most 1024 bytes
// per byte of the file and exactly to the size it declares, runs of
// levels, dictionary indices and deltas stay within their page's values).
// Nothing is timed: a file is refused for what it declares.
//
// # Errors
//
// A log that breaks the contract is refused, whole, with one *FormatError
// for the first problem found (for a header, for all of its problems);
// nothing is dropped, clipped or guessed. It names the file, the row and
// the column (as the file names it):
//
//	logs.csv: row 7, column "behavior_prob": 0 is outside (0, 1]
//
// Rows count as a spreadsheet shows them: the CSV header is row 1, so the
// first data row is row 2; a quoted field with line breaks does not add
// rows. Parquet has no header row: its first record is row 1. Row is 0 for
// problems of the whole file or of a Parquet schema, and Column is "" for
// problems of a whole row. Problems in one field are found as the rows are
// read; problems between rows (a duplicate or missing t, a next_state that
// disagrees with the next row) after all rows are read, and are reported
// at the row where they show: for a gap, the first row after it.
//
// # Writing
//
// WriteCSV, WriteParquet, Write and WriteFile (any Format) write
// behavior_logprob (when the dataset has behavior probabilities) and
// target_logprob (exact, in the shortest form that reads back to the same
// float64) and next_state on the last row of each episode; with
// TargetProbs also target_prob_0 ... target_prob_{K-1} on every row and,
// where HasFinalTarget, next_target_prob_k on the last row, and terminal
// (0 or 1 on every row) when Terminal is not nil. They first
// check the dataset with dataset.Dataset.Validate, so a dataset that is written
// reads back identical.
package logio
