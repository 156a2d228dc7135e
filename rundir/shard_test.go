package rundir

import "testing"

// TestShardPartition: for every split of a run among N shards, the shards'
// sequences are a partition of 1…total, each shard's in increasing order,
// Messages counts them, and by clients every client's messages stay in one
// shard.
func TestShardPartition(t *testing.T) {
	for _, c := range []struct{ clients, count int }{{1, 1}, {1, 3}, {2, 3}, {3, 3}, {4, 3}, {7, 3}, {10, 4}, {5, 2}, {1000, 3}, {2, 7}} {
		const total = 2500
		owner := map[int64]int{}
		clientShard := map[int64]int{}
		for i := 0; i < c.count; i++ {
			sh, err := NewShard(i, c.count, c.clients)
			if err != nil {
				t.Fatal(err)
			}
			if want := ShardBySequence; c.clients < c.count && sh.By != want {
				t.Errorf("%d clients, %d shards: by %s, want %s", c.clients, c.count, sh.By, want)
			}
			var prev int64
			k := int64(1)
			for ; ; k++ {
				seq := sh.Seq(k)
				if seq > total {
					break
				}
				if seq <= prev {
					t.Fatalf("%+v: Seq(%d) = %d after %d: not increasing", sh, k, seq, prev)
				}
				prev = seq
				if o, ok := owner[seq]; ok {
					t.Fatalf("%+v: seq %d also in shard %d", sh, seq, o)
				}
				owner[seq] = i
				if !sh.Owns(seq) {
					t.Fatalf("%+v: Seq(%d) = %d but Owns(%d) is false", sh, k, seq, seq)
				}
				client := (seq - 1) % int64(c.clients)
				if o, ok := clientShard[client]; ok && o != i && sh.By == ShardByClients {
					t.Fatalf("%+v: client %d in shards %d and %d", sh, client, o, i)
				}
				clientShard[client] = i
			}
			if got := sh.Messages(total); got != k-1 {
				t.Errorf("%+v: Messages(%d) = %d, Seq enumerates %d", sh, total, got, k-1)
			}
		}
		if len(owner) != total {
			t.Errorf("%d clients, %d shards: %d of %d sequences owned", c.clients, c.count, len(owner), total)
		}
		var share float64
		for i := 0; i < c.count; i++ {
			sh, _ := NewShard(i, c.count, c.clients)
			share += sh.Share()
		}
		if share < 0.999999 || share > 1.000001 {
			t.Errorf("%d clients, %d shards: shares add to %g", c.clients, c.count, share)
		}
	}
}

func TestParseShard(t *testing.T) {
	if i, n, err := ParseShard("2/3"); err != nil || i != 2 || n != 3 {
		t.Fatalf("2/3: %d %d %v", i, n, err)
	}
	for _, bad := range []string{"3/3", "-1/3", "1", "a/b", "0/0", ""} {
		if _, _, err := ParseShard(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
