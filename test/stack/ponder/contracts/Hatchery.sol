// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// A minimal ERC20-like token: balances and transfers, nothing else.
contract HatchToken {
    event Transfer(address indexed from, address indexed to, uint256 value);

    mapping(address => uint256) public balanceOf;

    constructor(uint256 supply) {
        balanceOf[msg.sender] = supply;
        emit Transfer(address(0), msg.sender, supply);
    }

    function transfer(address to, uint256 value) external returns (bool) {
        require(balanceOf[msg.sender] >= value, "balance");
        balanceOf[msg.sender] -= value;
        balanceOf[to] += value;
        emit Transfer(msg.sender, to, value);
        return true;
    }
}

/// The NFT, its editions, the market, the forge, staking and referrals, in one small contract.
/// Not safe for real money: it exists so a real Ponder app has real events to index in tests.
contract Hatchery {
    struct Edition {
        string name;
        string artUri;
        uint8 health;
        uint8 skill;
        uint8 morale;
        uint8 rarity;
        uint256 maxSupply;
        uint256 mintStart;
        uint256 mintEnd;
        uint256 price;
        uint8 distribution;
    }

    struct Listing {
        address seller;
        uint256 price;
        bool active;
    }

    struct ForgeRequest {
        address buyer;
        uint8 tier;
        bool open;
    }

    struct Pair {
        address staker;
        uint256 maleId;
        uint256 femaleId;
        bool staked;
    }

    /// Basis points of a sale's price kept as the platform fee, paid as royalty, and of the fee accrued to the buyer's referrer.
    uint256 public constant PLATFORM_FEE_BPS = 250;
    uint256 public constant ROYALTY_BPS = 500;
    uint256 public constant REFERRAL_BPS = 2000;

    event EditionCreated(uint256 indexed editionId, Edition edition);
    event EditionActiveSet(uint256 indexed editionId, bool active);
    event Transfer(address indexed from, address indexed to, uint256 indexed tokenId);
    event Minted(uint256 indexed tokenId, address indexed owner, uint256 indexed editionId, uint8 gender, string name);
    event Listed(uint256 indexed tokenId, address indexed seller, uint256 price);
    event ListingCancelled(uint256 indexed tokenId);
    event Sold(uint256 indexed tokenId, address indexed seller, address indexed buyer, uint256 price, uint256 platformFee, uint256 royalty);
    event ForgeRequested(uint256 indexed requestId, address indexed buyer, uint8 tier);
    event ForgeFulfilled(uint256 indexed requestId, uint256 indexed tokenId, uint256 indexed editionId);
    event ForgeCancelled(uint256 indexed requestId);
    event PairStaked(uint256 indexed pairId, address indexed staker, uint256 maleId, uint256 femaleId, bool matched, uint256 stakedAt);
    event PairClaimed(uint256 indexed pairId, uint256 claimedAt);
    event PairUnstaked(uint256 indexed pairId);
    event ReferrerRegistered(address indexed referrer, uint256 code);
    event ReferralLinked(address indexed buyer, address indexed referrer);
    event ReferralAccrued(address indexed referrer, address indexed buyer, uint256 amount);
    event ReferralClaimed(address indexed referrer, uint256 amount);

    address public immutable admin;
    uint256 public editionCount;
    uint256 public tokenCount;
    uint256 public requestCount;
    uint256 public pairCount;

    mapping(uint256 => Edition) public editions;
    mapping(uint256 => uint256) public minted;
    mapping(uint256 => address) public ownerOf;
    mapping(uint256 => uint8) public genderOf;
    mapping(uint256 => bool) public stakedToken;
    mapping(uint256 => Listing) public listings;
    mapping(uint256 => ForgeRequest) public forgeRequests;
    mapping(uint256 => Pair) public pairs;
    mapping(address => uint256) public referralCode;
    mapping(uint256 => address) public referrerOfCode;
    mapping(address => address) public referrerOf;
    mapping(address => uint256) public referralBalance;

    constructor() {
        admin = msg.sender;
    }

    modifier onlyAdmin() {
        require(msg.sender == admin, "admin");
        _;
    }

    // Editions and minting

    function createEdition(Edition calldata edition) external onlyAdmin returns (uint256 editionId) {
        editionId = ++editionCount;
        editions[editionId] = edition;
        emit EditionCreated(editionId, edition);
        emit EditionActiveSet(editionId, true);
    }

    function setEditionActive(uint256 editionId, bool active) external onlyAdmin {
        require(editionId > 0 && editionId <= editionCount, "edition");
        emit EditionActiveSet(editionId, active);
    }

    function mint(address to, uint256 editionId, uint8 gender, string calldata name) external onlyAdmin returns (uint256) {
        return _mint(to, editionId, gender, name);
    }

    function burn(uint256 tokenId) external {
        require(ownerOf[tokenId] == msg.sender && !stakedToken[tokenId], "owner");
        require(!listings[tokenId].active, "listed");
        delete ownerOf[tokenId];
        emit Transfer(msg.sender, address(0), tokenId);
    }

    function _mint(address to, uint256 editionId, uint8 gender, string memory name) internal returns (uint256 tokenId) {
        require(editionId > 0 && editionId <= editionCount, "edition");
        require(minted[editionId] < editions[editionId].maxSupply, "sold out");
        require(gender <= 1, "gender");
        minted[editionId] += 1;
        tokenId = ++tokenCount;
        ownerOf[tokenId] = to;
        genderOf[tokenId] = gender;
        emit Transfer(address(0), to, tokenId);
        emit Minted(tokenId, to, editionId, gender, name);
    }

    // Market: a listing leaves the token with its seller until it sells.

    function list(uint256 tokenId, uint256 price) external {
        require(ownerOf[tokenId] == msg.sender && !stakedToken[tokenId], "owner");
        require(price > 0 && !listings[tokenId].active, "price");
        listings[tokenId] = Listing(msg.sender, price, true);
        emit Listed(tokenId, msg.sender, price);
    }

    function cancelListing(uint256 tokenId) external {
        require(listings[tokenId].active && listings[tokenId].seller == msg.sender, "listing");
        listings[tokenId].active = false;
        emit ListingCancelled(tokenId);
    }

    function buy(uint256 tokenId) external payable {
        Listing memory listing = listings[tokenId];
        require(listing.active && msg.value == listing.price, "listing");
        require(msg.sender != listing.seller, "own");
        listings[tokenId].active = false;
        uint256 fee = (listing.price * PLATFORM_FEE_BPS) / 10_000;
        uint256 royalty = (listing.price * ROYALTY_BPS) / 10_000;
        ownerOf[tokenId] = msg.sender;
        emit Transfer(listing.seller, msg.sender, tokenId);
        emit Sold(tokenId, listing.seller, msg.sender, listing.price, fee, royalty);
        address referrer = referrerOf[msg.sender];
        if (referrer != address(0)) {
            uint256 amount = (fee * REFERRAL_BPS) / 10_000;
            referralBalance[referrer] += amount;
            emit ReferralAccrued(referrer, msg.sender, amount);
        }
        (bool paid, ) = listing.seller.call{value: listing.price - fee - royalty}("");
        require(paid, "payment");
    }

    // Forge: a buyer requests, the admin fulfils with the random outcome (a mint to the buyer).

    function requestForge(uint8 tier) external returns (uint256 requestId) {
        require(tier >= 1 && tier <= 3, "tier");
        requestId = ++requestCount;
        forgeRequests[requestId] = ForgeRequest(msg.sender, tier, true);
        emit ForgeRequested(requestId, msg.sender, tier);
    }

    function fulfilForge(uint256 requestId, uint256 editionId, uint8 gender, string calldata name) external onlyAdmin returns (uint256 tokenId) {
        ForgeRequest storage request = forgeRequests[requestId];
        require(request.open, "request");
        request.open = false;
        tokenId = _mint(request.buyer, editionId, gender, name);
        emit ForgeFulfilled(requestId, tokenId, editionId);
    }

    function cancelForge(uint256 requestId) external {
        ForgeRequest storage request = forgeRequests[requestId];
        require(request.open && request.buyer == msg.sender, "request");
        request.open = false;
        emit ForgeCancelled(requestId);
    }

    // Staking: a male alone, or a male and a female (matched); the tokens stay with their owner, locked.

    function stake(uint256 maleId, uint256 femaleId) external returns (uint256 pairId) {
        require(ownerOf[maleId] == msg.sender && genderOf[maleId] == 0 && !stakedToken[maleId], "male");
        require(!listings[maleId].active, "listed");
        bool matched = femaleId != 0;
        if (matched) {
            require(ownerOf[femaleId] == msg.sender && genderOf[femaleId] == 1 && !stakedToken[femaleId], "female");
            require(!listings[femaleId].active, "listed");
            stakedToken[femaleId] = true;
        }
        stakedToken[maleId] = true;
        pairId = ++pairCount;
        pairs[pairId] = Pair(msg.sender, maleId, femaleId, true);
        emit PairStaked(pairId, msg.sender, maleId, femaleId, matched, block.timestamp);
    }

    function claimStaking(uint256 pairId) external {
        require(pairs[pairId].staked && pairs[pairId].staker == msg.sender, "pair");
        emit PairClaimed(pairId, block.timestamp);
    }

    function unstake(uint256 pairId) external {
        Pair storage pair = pairs[pairId];
        require(pair.staked && pair.staker == msg.sender, "pair");
        pair.staked = false;
        stakedToken[pair.maleId] = false;
        if (pair.femaleId != 0) stakedToken[pair.femaleId] = false;
        emit PairUnstaked(pairId);
    }

    // Referrals: a referrer registers a code, a buyer links to it once, sales accrue, the referrer claims.

    function registerReferrer(uint256 code) external {
        require(code != 0 && referrerOfCode[code] == address(0) && referralCode[msg.sender] == 0, "code");
        referralCode[msg.sender] = code;
        referrerOfCode[code] = msg.sender;
        emit ReferrerRegistered(msg.sender, code);
    }

    function linkReferrer(uint256 code) external {
        address referrer = referrerOfCode[code];
        require(referrer != address(0) && referrer != msg.sender && referrerOf[msg.sender] == address(0), "link");
        referrerOf[msg.sender] = referrer;
        emit ReferralLinked(msg.sender, referrer);
    }

    function claimReferral() external {
        uint256 amount = referralBalance[msg.sender];
        require(amount > 0, "nothing");
        referralBalance[msg.sender] = 0;
        emit ReferralClaimed(msg.sender, amount);
        (bool paid, ) = msg.sender.call{value: amount}("");
        require(paid, "payment");
    }
}
