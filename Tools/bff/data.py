"""The reference BFF's data: users, moments and who liked what, deterministic.

Moments are global: one moment may stand in several users' timelines, and its likes are
the same wherever it stands. `isLiked` is relative to the user whose timeline is asked
(`per-viewer`, the default), or, as the public Moments BFF keeps it, one value per
moment whoever asks (`global`): set by the last like or unlike of anyone, and at first
"someone likes it", so it may disagree with `likes`.
"""
import threading

IMAGE = "https://images.example.com"


def _user(uid, name):
    return {
        "id": uid,
        "name": name,
        "avatar": "%s/avatars/%s.jpg" % (IMAGE, uid),
        "backgroundImage": "%s/backgrounds/%s.jpg" % (IMAGE, uid),
    }


class Store:
    """All data, guarded by one lock."""

    def __init__(self, users=0, moments_per_user=10, is_liked="per-viewer"):
        if is_liked not in ("per-viewer", "global"):
            raise ValueError("is_liked must be per-viewer or global")
        self.is_liked = is_liked
        self.liked = {}  # moment id -> the global isLiked
        self.lock = threading.Lock()
        self.version = 0  # rises with every change, so cached answers can be dropped
        self.users = {}
        self.moments = {}
        self.likers = {}  # moment id -> list of user ids, in order of liking
        self.timelines = {}  # user id -> list of moment ids
        self._seed()
        self._generate(users, moments_per_user)

    def _seed(self):
        for uid, name in [("0", "Jake Lin"), ("1", "Taylor Swift"), ("2", "Mark Zuckerberg"), ("3", "Ada Lovelace")]:
            self.users[uid] = _user(uid, name)
        samples = [
            {"id": "0", "author": "1", "type": "URL", "title": "Swift on the server",
             "url": "https://www.swift.org/documentation/server/", "photos": ["%s/moments/0.jpg" % IMAGE],
             "createdDate": "1605521360", "likers": ["1", "2"]},
            {"id": "1", "author": "2", "type": "PHOTOS", "title": None, "url": None,
             "photos": ["%s/moments/1-%d.jpg" % (IMAGE, i) for i in range(3)],
             "createdDate": "1605435065", "likers": []},
            {"id": "2", "author": "3", "type": "PHOTOS", "title": "東京の夜 🌃 — café",
             "url": None, "photos": ["%s/moments/2.jpg" % IMAGE],
             "createdDate": "1605348770", "likers": ["0"]},
            {"id": "3", "author": "0", "type": "URL", "title": "Moments SDK",
             "url": "https://moments.example.com/sdk", "photos": [],
             "createdDate": "1605262475", "likers": ["3"]},
        ]
        for sample in samples:
            self._add_moment(sample)
        self.timelines["0"] = [m["id"] for m in samples]
        for uid in ("1", "2", "3"):
            self.timelines[uid] = ["0", "2"]

    def _add_moment(self, spec):
        self.moments[spec["id"]] = {k: v for k, v in spec.items() if k != "likers"}
        self.likers[spec["id"]] = list(spec["likers"])
        self.liked[spec["id"]] = bool(spec["likers"])

    def _generate(self, users, per_user):
        """Users `user-1` … `user-N`, each with `per_user` moments of their own plus
        sample moment "0", which every timeline shares."""
        for n in range(1, users + 1):
            uid = "user-%d" % n
            self.users[uid] = _user(uid, "User %d" % n)
            ids = []
            for j in range(per_user):
                mid = "%s-m%d" % (uid, j)
                self._add_moment({
                    "id": mid, "author": uid, "type": "PHOTOS" if j % 2 else "URL",
                    "title": None if j % 5 == 4 else "Moment %d of user %d" % (j, n),
                    "url": None if j % 2 else "https://moments.example.com/%s" % mid,
                    "photos": ["%s/moments/%s-%d.jpg" % (IMAGE, mid, k) for k in range(j % 3)],
                    "createdDate": str(1605000000 - n * 1000 - j),
                    "likers": ["0"] if j % 3 == 0 else [],
                })
                ids.append(mid)
            self.timelines[uid] = ids + ["0"]

    # Queries and mutations, as the schema's resolvers call them.

    def details(self, user_id):
        with self.lock:
            return self._details(user_id)

    def update_like(self, moment_id, user_id, is_liked):
        with self.lock:
            if user_id not in self.users:
                raise LookupError("no user with id %r" % user_id)
            likers = self.likers.get(moment_id)
            if likers is not None:  # an unknown moment is not an error
                if self.is_liked == "global" and self.liked.get(moment_id) != is_liked:
                    self.liked[moment_id] = is_liked
                    self.version += 1
                if is_liked and user_id not in likers:
                    likers.append(user_id)
                    self.version += 1
                elif not is_liked and user_id in likers:
                    likers.remove(user_id)
                    self.version += 1
            return self._details(user_id)

    def _details(self, user_id):
        if user_id not in self.users:
            raise LookupError("no user with id %r" % user_id)
        moments = []
        for mid in self.timelines.get(user_id, []):
            m = self.moments[mid]
            author = self.users[m["author"]]
            likers = self.likers[mid]
            moments.append({
                "id": mid,
                "userDetails": dict(author),
                "type": m["type"],
                "title": m["title"],
                "url": m["url"],
                "photos": list(m["photos"]),
                "createdDate": m["createdDate"],
                "isLiked": self.liked[mid] if self.is_liked == "global" else user_id in likers,
                # Entries of likes carry only id and avatar, as the real BFF's do.
                "likes": [{"id": uid, "avatar": self.users[uid]["avatar"]} for uid in likers],
            })
        return {"userDetails": dict(self.users[user_id]), "moments": moments}
