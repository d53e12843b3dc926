// Package words formats numbers and counts the way ihope's tables and
// messages print them: no minus sign on a value that rounds to zero, and
// "1 episode" but "2 episodes".
package words
