//! The tokens a throttle took from its destination's bucket and has not
//! spent, each by its number (the bucket numbers every token it grants,
//! across every process). A request goes out with the lowest number held,
//! so tokens go in the order the bucket granted them, and the number it
//! carries places its answer among the region's requests: the store takes
//! the tokens numbered above it off what the answer announced (they went
//! out after it), and ignores an answer to an earlier one than the stored
//! quota's. Taking the lowest keeps that count on the safe side: a number
//! too high for a request would leave requests on their way uncounted.

use std::collections::VecDeque;

/// Unspent tokens, lowest number first.
#[derive(Debug, Default)]
pub struct Unspent {
    numbers: VecDeque<u64>,
}

impl Unspent {
    /// Adds a grant of `tokens`, numbered up to `last`.
    pub fn granted(&mut self, tokens: u32, last: u64) {
        let first = last.saturating_sub(u64::from(tokens)).saturating_add(1);
        for number in first..=last {
            self.put_back(number);
        }
    }

    /// Keeps a token again (its task went back without its request, or an
    /// evicted throttle left it), in its place by number.
    pub fn put_back(&mut self, number: u64) {
        let at = self.numbers.partition_point(|&n| n < number);
        self.numbers.insert(at, number);
    }

    /// The token the next request goes out with: the lowest held.
    pub fn spend(&mut self) -> Option<u64> {
        self.numbers.pop_front()
    }

    pub fn len(&self) -> usize {
        self.numbers.len()
    }

    pub fn is_empty(&self) -> bool {
        self.numbers.is_empty()
    }

    /// Every token held, lowest first; none are held after.
    pub fn take_all(&mut self) -> Vec<u64> {
        self.numbers.drain(..).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_spent_lowest_number_first() {
        let mut unspent = Unspent::default();
        unspent.granted(3, 12);
        unspent.granted(2, 20);
        assert_eq!(unspent.spend(), Some(10));
        assert_eq!(unspent.spend(), Some(11));
        // A task went back unsent: its token goes first again.
        unspent.put_back(10);
        assert_eq!(unspent.len(), 4);
        assert_eq!(unspent.take_all(), vec![10, 12, 19, 20]);
        assert!(unspent.is_empty());
        assert_eq!(unspent.spend(), None);
    }
}
